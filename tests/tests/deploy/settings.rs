//! The deployment files: settings.

use super::*;

/// Every container of every task definition: (name, environment variable -> value).
pub(crate) fn containers(template: &Template) -> Vec<(String, BTreeMap<String, &Value>)> {
    let mut all = Vec::new();
    for (_, task) in template.resources("AWS::ECS::TaskDefinition") {
        for container in sequence(&task["ContainerDefinitions"]) {
            let environment = sequence(&container["Environment"])
                .iter()
                .map(|pair| (pair["Name"].as_str().unwrap().to_owned(), &pair["Value"]))
                .collect();
            all.push((container["Name"].as_str().unwrap().to_owned(), environment));
        }
    }
    all
}

/// The environment variables a binary reads, from clap's `[env: NAME=]` lines in `--help`
/// (`[env: NAME]` for a secret's, whose value help never shows).
pub(crate) fn accepted_settings(binary_name: &str) -> BTreeSet<String> {
    let output = Command::new(binary(binary_name))
        .arg("--help")
        .env_clear() // help shows a variable's current value; show none
        .output()
        .unwrap();
    assert!(output.status.success(), "{binary_name} --help failed");
    let help = String::from_utf8(output.stdout).unwrap();
    let names: BTreeSet<String> = help
        .split("[env: ")
        .skip(1)
        .filter_map(|rest| {
            rest.split(['=', ']'])
                .next()
                .filter(|name| !name.is_empty())
                .map(str::to_owned)
        })
        .collect();
    assert!(
        names.contains("SEATCLAIM_BACKEND"),
        "could not read the settings from {binary_name} --help:\n{help}"
    );
    names
}

/// Checks that a process started as `command` with these variables only sets settings it reads.
pub(crate) fn check_settings(
    origin: &str,
    command: &[Value],
    environment: impl IntoIterator<Item = String>,
    accepted: &mut BTreeMap<String, BTreeSet<String>>,
) {
    let binary_name = command
        .first()
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("{origin}: the command names the binary to run"));
    let known = accepted
        .entry(binary_name.to_owned())
        .or_insert_with(|| accepted_settings(binary_name));
    for variable in environment {
        assert!(
            !variable.starts_with("SEATCLAIM_") || known.contains(&variable),
            "{origin}: {binary_name} does not read {variable} (it reads {known:?})"
        );
    }
}

#[test]
pub(crate) fn every_setting_the_deployment_passes_is_one_the_binary_reads() {
    let template = Template::load();
    let mut accepted = BTreeMap::new();
    let mut binaries = BTreeSet::new();
    for (_, task) in template.resources("AWS::ECS::TaskDefinition") {
        for container in sequence(&task["ContainerDefinitions"]) {
            let name = container["Name"].as_str().unwrap();
            let command = sequence(&container["Command"]);
            let environment: BTreeMap<String, &Value> = sequence(&container["Environment"])
                .iter()
                .map(|pair| (pair["Name"].as_str().unwrap().to_owned(), &pair["Value"]))
                .collect();
            // ECS sets a container's Secrets as environment variables too.
            check_settings(
                &format!("{TEMPLATE} container {name}"),
                command,
                environment
                    .keys()
                    .cloned()
                    .chain(secrets_of(container).into_keys()),
                &mut accepted,
            );
            binaries.insert(command[0].as_str().unwrap().to_owned());

            assert_eq!(
                environment
                    .get("SEATCLAIM_BACKEND")
                    .and_then(|v| v.as_str()),
                Some("aws"),
                "{name}"
            );
            assert_eq!(
                environment
                    .get("SEATCLAIM_AWS_PREFIX")
                    .and_then(|v| ref_target(v)),
                Some("Prefix"),
                "{name}: the services use the prefix the resources are named with"
            );
            assert_eq!(
                environment
                    .get("SEATCLAIM_LOG_FORMAT")
                    .and_then(|v| v.as_str()),
                Some("json"),
                "{name}"
            );
            assert_eq!(
                environment.get("AWS_REGION").and_then(|v| ref_target(v)),
                Some("AWS::Region"),
                "{name}"
            );
            if let Some(listen) = environment.get("SEATCLAIM_LISTEN") {
                // The API's port is the one published and the one the load balancer targets.
                let port: u64 = listen
                    .as_str()
                    .and_then(|l| l.rsplit_once(':'))
                    .map(|(_, port)| port.parse().unwrap())
                    .unwrap();
                let mappings = sequence(&container["PortMappings"]);
                assert!(
                    mappings
                        .iter()
                        .any(|m| m["ContainerPort"].as_u64() == Some(port)),
                    "{name}: port {port} is mapped"
                );
                for (id, group) in template.resources("AWS::ElasticLoadBalancingV2::TargetGroup") {
                    assert_eq!(group["Port"].as_u64(), Some(port), "{id}");
                }
                assert_eq!(
                    environment
                        .get("SEATCLAIM_EMBEDDED_WORKER")
                        .and_then(|v| v.as_str()),
                    Some("false"),
                    "{name}: on AWS the worker is its own service"
                );
            }
        }
    }
    assert_eq!(
        binaries,
        BTreeSet::from([
            "seatclaim-api".to_owned(),
            "seatclaim-worker".to_owned(),
            "seatclaimctl".to_owned()
        ]),
        "the task definitions run the API, the worker and seatclaimctl"
    );

    let compose = parse(COMPOSE);
    let services = compose["services"].as_mapping().unwrap();
    let mut compose_binaries = BTreeSet::new();
    for (name, service) in services {
        let name = name.as_str().unwrap();
        let command = sequence(&service["command"]);
        if !command
            .first()
            .and_then(Value::as_str)
            .is_some_and(|first| first.starts_with("seatclaim"))
        {
            continue; // not one of ours (the emulator)
        }
        let environment: Vec<String> = service["environment"]
            .as_mapping()
            .map(Mapping::keys)
            .into_iter()
            .flatten()
            .map(|k| k.as_str().unwrap().to_owned())
            .collect();
        check_settings(
            &format!("{COMPOSE} service {name}"),
            command,
            environment,
            &mut accepted,
        );
        compose_binaries.insert(command[0].as_str().unwrap().to_owned());
    }
    assert_eq!(
        compose_binaries,
        BTreeSet::from([
            "seatclaim-api".to_owned(),
            "seatclaim-worker".to_owned(),
            "seatclaimctl".to_owned()
        ]),
        "the compose stack runs init, the API and the worker"
    );
}

/// The console shows the parameters by the template's groups and puts any it leaves out at the
/// end, away from the ones it goes with: every parameter belongs to exactly one group.
#[test]
pub(crate) fn every_parameter_is_shown_in_exactly_one_group() {
    let template = Template::load();
    let groups =
        sequence(&template.root["Metadata"]["AWS::CloudFormation::Interface"]["ParameterGroups"]);
    assert!(!groups.is_empty(), "the template groups its parameters");
    let mut grouped: BTreeMap<String, usize> = BTreeMap::new();
    for group in groups {
        for parameter in sequence(&group["Parameters"])
            .iter()
            .filter_map(scalar_text)
        {
            *grouped.entry(parameter).or_default() += 1;
        }
    }
    let parameters: BTreeSet<String> = template.root["Parameters"]
        .as_mapping()
        .unwrap()
        .keys()
        .filter_map(scalar_text)
        .collect();
    assert_eq!(
        grouped.keys().cloned().collect::<BTreeSet<_>>(),
        parameters,
        "the groups name exactly the parameters"
    );
    for (parameter, count) in &grouped {
        assert_eq!(*count, 1, "{parameter} is in one group");
    }
}
