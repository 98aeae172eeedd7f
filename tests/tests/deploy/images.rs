//! The deployment files: images.

use super::*;

#[test]
pub(crate) fn the_dockerfile_builds_what_the_deployment_runs() {
    let dockerfile = read(DOCKERFILE);
    // Every workspace member's manifest must be in the dependency layer, or `--locked` fails.
    let manifest = read("Cargo.toml");
    let members_list = manifest
        .split_once("members = [")
        .and_then(|(_, rest)| rest.split_once(']'))
        .expect("the workspace lists its members")
        .0;
    let members: Vec<&str> = members_list.split('"').skip(1).step_by(2).collect();
    assert!(!members.is_empty());
    for member in members {
        assert!(
            dockerfile.contains(&format!("COPY {member}/Cargo.toml")),
            "{DOCKERFILE} does not copy {member}/Cargo.toml"
        );
    }

    let template = Template::load();
    let mut deployed: BTreeSet<String> = BTreeSet::new();
    for (_, task) in template.resources("AWS::ECS::TaskDefinition") {
        for container in sequence(&task["ContainerDefinitions"]) {
            deployed.insert(container["Command"][0].as_str().unwrap().to_owned());
        }
    }
    let compose = parse(COMPOSE);
    for (_, service) in compose["services"].as_mapping().unwrap() {
        let first = service["command"][0].as_str();
        deployed.extend(
            first
                .filter(|first| first.starts_with("seatclaim"))
                .map(str::to_owned),
        );
    }
    for name in &deployed {
        assert!(
            dockerfile.contains(&format!("--bin {name}")),
            "{DOCKERFILE} does not build {name}"
        );
    }

    // The compose stack's emulator is the version the test suites run against.
    let start = read("tests/emulator/start.sh");
    let version = start
        .lines()
        .find_map(|line| line.strip_prefix("MOTO_VERSION="))
        .expect("start.sh pins MOTO_VERSION");
    let moto_command = sequence(&compose["services"]["moto"]["command"])
        .iter()
        .filter_map(Value::as_str)
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        moto_command.contains(&format!("moto[server]=={version}")),
        "{COMPOSE} installs another moto than {version}: {moto_command}"
    );
}
