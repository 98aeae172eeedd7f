//! The deployment files in `deploy/` agree with the code: this suite parses the CloudFormation
//! template and the compose file and compares them with what the binaries use, so renaming a
//! table, an index, a queue or a setting in the code fails here until the templates follow.
//!
//! - tables: names from `AwsNames::from_settings`, keys, attribute types and indexes from
//!   `table_specs` (every index projecting all attributes);
//! - queues: names, the redrive from the intent queue to its DLQ, and `maxReceiveCount` equal to
//!   `BackendSettings::max_receive_count()` for every `MaxAttempts` the template allows;
//! - the event bus's name and the event source in every rule and archive pattern;
//! - container settings: every `SEATCLAIM_*` variable a task definition or compose service sets is
//!   one its binary accepts (read from the binary's own `--help`);
//! - IAM: no wildcard actions or resources (but the one ECR login), index ARNs name real indexes;
//! - the Dockerfile copies every workspace member's manifest and builds every binary deployed.
//!
//! CloudFormation's short-form tags (`!Sub`, `!Ref`, `!GetAtt`, ...) are kept by the YAML parser
//! as tagged values; [`intrinsic`] reads them and their long forms (`Fn::Sub:`) alike.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use seatclaim_e2e::binary;
use seatclaim_shared::adapters::aws::{AwsNames, table_specs};
use seatclaim_shared::config::{AwsSettings, BackendSettings};
use seatclaim_shared::domain::EVENT_SOURCE;
use serde_norway::{Mapping, Value};

const TEMPLATE: &str = "deploy/cloudformation/seatclaim.yaml";
const COMPOSE: &str = "deploy/compose.yaml";
const DOCKERFILE: &str = "deploy/Dockerfile";

fn repo_file(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .join(relative)
}

fn read(relative: &str) -> String {
    let path = repo_file(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

fn parse(relative: &str) -> Value {
    let mut value: Value = serde_norway::from_str(&read(relative))
        .unwrap_or_else(|e| panic!("{relative} is not valid YAML: {e}"));
    // Compose files share settings through `<<: *anchor` merge keys.
    value.apply_merge().unwrap();
    value
}

/// A CloudFormation intrinsic function, in either form: `!Sub x` or `{"Fn::Sub": x}` (and `!Ref x`
/// or `{"Ref": x}`). Returns the function's name without prefix ("Sub", "Ref", "GetAtt", ...).
fn intrinsic(value: &Value) -> Option<(String, &Value)> {
    match value {
        Value::Tagged(tagged) => {
            let tag = tagged.tag.to_string();
            Some((tag.trim_start_matches('!').to_owned(), &tagged.value))
        }
        Value::Mapping(mapping) if mapping.len() == 1 => {
            let (key, argument) = mapping.iter().next()?;
            let key = key.as_str()?;
            let name = key.strip_prefix("Fn::").or((key == "Ref").then_some(key))?;
            Some((name.to_owned(), argument))
        }
        _ => None,
    }
}

/// The logical id a `!Ref` points at.
fn ref_target(value: &Value) -> Option<&str> {
    match intrinsic(value)? {
        (name, argument) if name == "Ref" => argument.as_str(),
        _ => None,
    }
}

/// The (logical id, attribute) a `!GetAtt` names, in its `X.Attr` or `[X, Attr]` form.
fn get_att(value: &Value) -> Option<(String, String)> {
    let (name, argument) = intrinsic(value)?;
    if name != "GetAtt" {
        return None;
    }
    match argument {
        Value::String(text) => {
            let (id, attribute) = text.split_once('.')?;
            Some((id.to_owned(), attribute.to_owned()))
        }
        Value::Sequence(parts) if parts.len() == 2 => {
            Some((parts[0].as_str()?.to_owned(), parts[1].as_str()?.to_owned()))
        }
        _ => None,
    }
}

/// The template with its parameter defaults, for resolving names.
struct Template {
    root: Value,
    /// Parameter name -> default value (as text).
    defaults: BTreeMap<String, String>,
}

impl Template {
    fn load() -> Self {
        let root = parse(TEMPLATE);
        let defaults = root["Parameters"]
            .as_mapping()
            .expect("the template has Parameters")
            .iter()
            .filter_map(|(name, parameter)| {
                let default = scalar_text(&parameter["Default"])?;
                Some((name.as_str()?.to_owned(), default))
            })
            .collect();
        Self { root, defaults }
    }

    fn prefix(&self) -> &str {
        self.defaults
            .get("Prefix")
            .expect("the Prefix parameter has a default")
    }

    /// The names the code derives from the template's default prefix.
    fn names(&self) -> AwsNames {
        AwsNames::from_settings(&AwsSettings {
            aws_prefix: self.prefix().to_owned(),
            ..AwsSettings::default()
        })
    }

    /// Every resource of a type: (logical id, properties).
    fn resources(&self, kind: &str) -> Vec<(String, &Value)> {
        self.root["Resources"]
            .as_mapping()
            .expect("the template has Resources")
            .iter()
            .filter(|(_, resource)| resource["Type"].as_str() == Some(kind))
            .map(|(id, resource)| (id.as_str().unwrap().to_owned(), &resource["Properties"]))
            .collect()
    }

    fn resource_type(&self, id: &str) -> Option<&str> {
        self.root["Resources"][id]["Type"].as_str()
    }

    /// A string property, resolving `!Sub` and `!Ref` of parameters to their defaults. Pseudo
    /// parameters (`${AWS::Region}`) and attributes are left as written.
    fn text(&self, value: &Value) -> Option<String> {
        if let Some(text) = scalar_text(value) {
            return Some(text);
        }
        match intrinsic(value)? {
            (name, Value::String(pattern)) if name == "Sub" => {
                let mut text = pattern.clone();
                for (parameter, default) in &self.defaults {
                    text = text.replace(&format!("${{{parameter}}}"), default);
                }
                Some(text)
            }
            (name, Value::String(parameter)) if name == "Ref" => {
                self.defaults.get(parameter).cloned()
            }
            _ => None,
        }
    }
}

fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        Value::Bool(flag) => Some(flag.to_string()),
        _ => None,
    }
}

fn sequence(value: &Value) -> &[Value] {
    value.as_sequence().map_or(&[], Vec::as_slice)
}

// ------------------------------------------------------------------------------------- tables

/// (hash attribute, range attribute) of a `KeySchema`.
fn key_schema(schema: &Value) -> (String, Option<String>) {
    let mut hash = None;
    let mut range = None;
    for element in sequence(schema) {
        let name = element["AttributeName"].as_str().unwrap().to_owned();
        match element["KeyType"].as_str() {
            Some("HASH") => hash = Some(name),
            Some("RANGE") => range = Some(name),
            other => panic!("unknown KeyType {other:?}"),
        }
    }
    (hash.expect("a KeySchema has a HASH key"), range)
}

#[test]
fn every_table_matches_the_code_in_name_keys_types_and_indexes() {
    let template = Template::load();
    let names = template.names();
    let specs = table_specs(&names);
    let tables: BTreeMap<String, &Value> = template
        .resources("AWS::DynamoDB::Table")
        .into_iter()
        .map(|(id, properties)| {
            let name = template
                .text(&properties["TableName"])
                .unwrap_or_else(|| panic!("{id}: TableName must be a literal or !Sub of Prefix"));
            (name, properties)
        })
        .collect();
    let expected: BTreeSet<&str> = specs.iter().map(|spec| spec.name).collect();
    let found: BTreeSet<&str> = tables.keys().map(String::as_str).collect();
    assert_eq!(
        found, expected,
        "the template's tables differ from table_specs"
    );

    for spec in &specs {
        let table = tables[spec.name];
        let types: BTreeMap<&str, &str> = sequence(&table["AttributeDefinitions"])
            .iter()
            .map(|a| {
                (
                    a["AttributeName"].as_str().unwrap(),
                    a["AttributeType"].as_str().unwrap(),
                )
            })
            .collect();
        let type_of = |attribute: &str| {
            *types.get(attribute).unwrap_or_else(|| {
                panic!(
                    "{}: key attribute {attribute} missing from AttributeDefinitions",
                    spec.name
                )
            })
        };

        let (hash, range) = key_schema(&table["KeySchema"]);
        assert_eq!(hash, spec.hash.0, "{}: partition key", spec.name);
        assert_eq!(
            type_of(&hash),
            spec.hash.1.as_str(),
            "{}: type of {hash}",
            spec.name
        );
        assert_eq!(
            range.as_deref(),
            spec.range.as_ref().map(|r| r.0),
            "{}: sort key",
            spec.name
        );
        if let (Some(range), Some(expected)) = (&range, &spec.range) {
            assert_eq!(
                type_of(range),
                expected.1.as_str(),
                "{}: type of {range}",
                spec.name
            );
        }

        let ttl = table["TimeToLiveSpecification"]
            .get("Enabled")
            .and_then(Value::as_bool)
            .filter(|enabled| *enabled)
            .and_then(|_| table["TimeToLiveSpecification"]["AttributeName"].as_str());
        assert_eq!(ttl, spec.ttl, "{}: the TTL attribute", spec.name);

        let indexes: BTreeMap<&str, &Value> = sequence(&table["GlobalSecondaryIndexes"])
            .iter()
            .map(|index| (index["IndexName"].as_str().unwrap(), index))
            .collect();
        let expected_indexes: BTreeSet<&str> = spec.indexes.iter().map(|i| i.0).collect();
        assert_eq!(
            indexes.keys().copied().collect::<BTreeSet<_>>(),
            expected_indexes,
            "{}: index names",
            spec.name
        );
        for (index_name, index_hash, index_range) in &spec.indexes {
            let index = indexes[index_name];
            let (hash, range) = key_schema(&index["KeySchema"]);
            assert_eq!(hash, index_hash.0, "{index_name}: partition key");
            assert_eq!(
                range.as_deref(),
                Some(index_range.0),
                "{index_name}: sort key"
            );
            assert_eq!(
                type_of(&hash),
                index_hash.1.as_str(),
                "{index_name}: {hash}"
            );
            assert_eq!(
                type_of(index_range.0),
                index_range.1.as_str(),
                "{index_name}: {}",
                index_range.0
            );
            assert_eq!(
                index["Projection"]["ProjectionType"].as_str(),
                Some("ALL"),
                "{index_name}: every index projects all attributes"
            );
        }

        // CloudFormation rejects attribute definitions no key uses; check the same here.
        let mut keys: BTreeSet<&str> = BTreeSet::from([spec.hash.0]);
        keys.extend(spec.range.as_ref().map(|r| r.0));
        for (_, index_hash, index_range) in &spec.indexes {
            keys.extend([index_hash.0, index_range.0]);
        }
        assert_eq!(
            types.keys().copied().collect::<BTreeSet<_>>(),
            keys,
            "{}: AttributeDefinitions must be exactly the key attributes",
            spec.name
        );

        assert_eq!(
            table["BillingMode"].as_str(),
            Some("PAY_PER_REQUEST"),
            "{}: on-demand",
            spec.name
        );
        assert_eq!(
            table["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"].as_bool(),
            Some(true),
            "{}: point-in-time recovery",
            spec.name
        );
    }

    assert_eq!(
        tables[names.seats_table.as_str()]["DeletionProtectionEnabled"].as_bool(),
        Some(true),
        "the inventory table is deletion-protected"
    );
    let ttl = &tables[names.jobs_table.as_str()]["TimeToLiveSpecification"];
    assert_eq!(
        ttl["Enabled"].as_bool(),
        Some(true),
        "the aliases of version 2's idempotency keys expire"
    );
    let ttl_attribute = ttl["AttributeName"].as_str().unwrap();
    // The attribute name is a literal where aliases are made; make sure it is still written.
    let migration = read("shared/src/adapters/aws/migrate.rs");
    assert!(
        migration.contains(&format!("\"{ttl_attribute}\"")),
        "the jobs table's TTL attribute {ttl_attribute} is no longer written by the code"
    );
}

// ------------------------------------------------------------------------------------- queues

#[test]
fn queues_and_their_redrive_match_the_worker_settings() {
    let template = Template::load();
    let names = template.names();
    let defaults = BackendSettings::in_folder(PathBuf::new());
    let queues: BTreeMap<String, (String, &Value)> = template
        .resources("AWS::SQS::Queue")
        .into_iter()
        .map(|(id, properties)| {
            let name = template.text(&properties["QueueName"]).unwrap();
            (name, (id, properties))
        })
        .collect();
    let (_, intents) = queues
        .get(&names.queue)
        .unwrap_or_else(|| panic!("no queue named {}", names.queue));
    let (dlq_id, dlq) = queues
        .get(&names.dlq)
        .unwrap_or_else(|| panic!("no queue named {}", names.dlq));

    let redrive = &intents["RedrivePolicy"];
    assert_eq!(
        get_att(&redrive["deadLetterTargetArn"]),
        Some((dlq_id.clone(), "Arn".to_owned())),
        "the intent queue dead-letters into {}",
        names.dlq
    );

    // maxReceiveCount = !FindInMap [Map, !Ref MaxAttempts, Key], and every row of the map is
    // what the code computes for that number of attempts.
    let (function, arguments) = intrinsic(&redrive["maxReceiveCount"]).unwrap();
    assert_eq!(
        function, "FindInMap",
        "maxReceiveCount is derived from MaxAttempts"
    );
    let arguments = sequence(arguments);
    assert_eq!(ref_target(&arguments[1]), Some("MaxAttempts"));
    let table = template.root["Mappings"][arguments[0].as_str().unwrap()]
        .as_mapping()
        .unwrap();
    let column = arguments[2].as_str().unwrap();
    let mut keys = BTreeSet::new();
    for (attempts, row) in table {
        let attempts: u32 = attempts.as_str().unwrap().parse().unwrap();
        let settings = BackendSettings {
            max_attempts: attempts,
            ..defaults.clone()
        };
        assert_eq!(
            row[column].as_u64(),
            Some(u64::from(settings.max_receive_count())),
            "maxReceiveCount for MaxAttempts = {attempts}"
        );
        keys.insert(attempts);
    }
    let parameter = &template.root["Parameters"]["MaxAttempts"];
    let allowed: BTreeSet<u32> = sequence(&parameter["AllowedValues"])
        .iter()
        .map(|v| scalar_text(v).unwrap().parse().unwrap())
        .collect();
    assert_eq!(
        allowed, keys,
        "every allowed MaxAttempts has a redrive limit, and no other"
    );
    assert_eq!(
        template.defaults["MaxAttempts"],
        defaults.max_attempts.to_string(),
        "MaxAttempts defaults to the code's default"
    );

    assert_eq!(
        ref_target(&intents["VisibilityTimeout"]),
        Some("VisibilityTimeoutSeconds")
    );
    assert_eq!(
        template.defaults["VisibilityTimeoutSeconds"],
        defaults.visibility_timeout_secs.to_string(),
        "VisibilityTimeoutSeconds defaults to the code's default"
    );

    assert_eq!(
        dlq["MessageRetentionPeriod"].as_u64(),
        Some(14 * 24 * 3600),
        "DLQ retention: 14 days, as seatclaimctl init sets it"
    );
    let sources: Vec<String> = sequence(&dlq["RedriveAllowPolicy"]["sourceQueueArns"])
        .iter()
        .map(|arn| template.text(arn).unwrap())
        .collect();
    assert!(
        sources.len() == 1 && sources[0].ends_with(&format!(":{}", names.queue)),
        "only {} may use the DLQ, got {sources:?}",
        names.queue
    );

    // Both services get the queue behaviour from the same parameters as the queue itself.
    for (container, environment) in containers(&template) {
        for (variable, parameter) in [
            ("SEATCLAIM_MAX_ATTEMPTS", "MaxAttempts"),
            (
                "SEATCLAIM_VISIBILITY_TIMEOUT_SECS",
                "VisibilityTimeoutSeconds",
            ),
        ] {
            let value = environment
                .get(variable)
                .unwrap_or_else(|| panic!("{container}: {variable} is not set"));
            assert_eq!(
                ref_target(value),
                Some(parameter),
                "{container}: {variable}"
            );
        }
    }
}

// ------------------------------------------------------------------------------------- events

#[test]
fn the_event_bus_and_every_pattern_match_the_code() {
    let template = Template::load();
    let names = template.names();
    let buses = template.resources("AWS::Events::EventBus");
    assert_eq!(buses.len(), 1, "one event bus");
    let (bus_id, bus) = &buses[0];
    assert_eq!(template.text(&bus["Name"]), Some(names.event_bus.clone()));

    let rules = template.resources("AWS::Events::Rule");
    let archives = template.resources("AWS::Events::Archive");
    assert!(
        !rules.is_empty() && !archives.is_empty(),
        "an example rule and an archive"
    );
    for (id, rule) in &rules {
        assert_eq!(
            ref_target(&rule["EventBusName"]),
            Some(bus_id.as_str()),
            "{id}"
        );
    }
    for (id, archive) in &archives {
        assert_eq!(
            get_att(&archive["SourceArn"]),
            Some((bus_id.clone(), "Arn".to_owned())),
            "{id}"
        );
    }
    for (id, resource) in rules.iter().chain(&archives) {
        let sources: Vec<&str> = sequence(&resource["EventPattern"]["source"])
            .iter()
            .map(|s| s.as_str().unwrap())
            .collect();
        assert_eq!(sources, [EVENT_SOURCE], "{id}: the pattern's source");
    }
}

// ------------------------------------------------------------------------------------- settings

/// Every container of every task definition: (name, environment variable -> value).
fn containers(template: &Template) -> Vec<(String, BTreeMap<String, &Value>)> {
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

/// The environment variables a binary reads, from clap's `[env: NAME=]` lines in `--help`.
fn accepted_settings(binary_name: &str) -> BTreeSet<String> {
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
        .filter_map(|rest| rest.split_once('=').map(|(name, _)| name.to_owned()))
        .collect();
    assert!(
        names.contains("SEATCLAIM_BACKEND"),
        "could not read the settings from {binary_name} --help:\n{help}"
    );
    names
}

/// Checks that a process started as `command` with these variables only sets settings it reads.
fn check_settings(
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
fn every_setting_the_deployment_passes_is_one_the_binary_reads() {
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
            check_settings(
                &format!("{TEMPLATE} container {name}"),
                command,
                environment.keys().cloned(),
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
        BTreeSet::from(["seatclaim-api".to_owned(), "seatclaim-worker".to_owned()]),
        "the task definitions run the API and the worker"
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

// ------------------------------------------------------------------------------------- IAM

#[test]
fn iam_policies_have_no_wildcards_and_name_real_indexes() {
    let template = Template::load();
    let names = template.names();
    let specs = table_specs(&names);
    let mut granted_indexes = BTreeSet::new();
    let mut roles = 0;
    for (role, properties) in template.resources("AWS::IAM::Role") {
        roles += 1;
        for policy in sequence(&properties["Policies"]) {
            for statement in sequence(&policy["PolicyDocument"]["Statement"]) {
                let actions: Vec<&str> = match &statement["Action"] {
                    Value::String(action) => vec![action.as_str()],
                    other => sequence(other)
                        .iter()
                        .map(|a| a.as_str().unwrap())
                        .collect(),
                };
                for action in &actions {
                    assert!(!action.contains('*'), "{role}: wildcard action {action}");
                    if *action == "dynamodb:Scan" {
                        assert_eq!(
                            get_att(&statement["Resource"]),
                            Some(("JobsTable".to_owned(), "Arn".to_owned())),
                            "{role}: only the audit scans, and only the jobs table"
                        );
                    }
                }
                let resources: Vec<&Value> = match &statement["Resource"] {
                    Value::Sequence(list) => list.iter().collect(),
                    single => vec![single],
                };
                for resource in resources {
                    if resource.as_str() == Some("*") {
                        // GetAuthorizationToken has no resource-level permissions.
                        assert_eq!(
                            actions,
                            ["ecr:GetAuthorizationToken"],
                            "{role}: Resource \"*\" is only for the ECR login"
                        );
                        continue;
                    }
                    let Some(text) = intrinsic(resource)
                        .filter(|(name, _)| name == "Sub")
                        .and_then(|(_, pattern)| pattern.as_str())
                    else {
                        continue; // a !GetAtt or !Ref of one resource
                    };
                    assert!(!text.contains('*'), "{role}: wildcard resource {text}");
                    if let Some((table_arn, index)) = text.split_once("/index/") {
                        let id = table_arn
                            .strip_prefix("${")
                            .and_then(|t| t.strip_suffix(".Arn}"))
                            .unwrap_or_else(|| panic!("{role}: index ARN {text}"));
                        assert_eq!(
                            template.resource_type(id),
                            Some("AWS::DynamoDB::Table"),
                            "{role}: {text}"
                        );
                        let table = template
                            .text(&template.root["Resources"][id]["Properties"]["TableName"])
                            .unwrap();
                        let spec = specs.iter().find(|s| s.name == table).unwrap();
                        assert!(
                            spec.indexes.iter().any(|(name, _, _)| *name == index),
                            "{role}: {table} has no index {index}"
                        );
                        granted_indexes.insert((table, index.to_owned()));
                    }
                }
            }
        }
    }
    assert!(roles >= 3, "an execution role and a task role per service");
    for spec in &specs {
        for (index, _, _) in &spec.indexes {
            assert!(
                granted_indexes.contains(&(spec.name.to_owned(), (*index).to_owned())),
                "no task role may query {}/index/{index}",
                spec.name
            );
        }
    }
}

// ------------------------------------------------------------------------------------- images

#[test]
fn the_dockerfile_builds_what_the_deployment_runs() {
    let dockerfile = read(DOCKERFILE);
    // Every workspace member's manifest must be in the dependency layer, or `--locked` fails.
    let manifest = read("Cargo.toml");
    let members_line = manifest
        .lines()
        .find(|line| line.trim_start().starts_with("members"))
        .expect("the workspace lists its members on one line");
    let members: Vec<&str> = members_line.split('"').skip(1).step_by(2).collect();
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

// ------------------------------------------------------------------------------- capacity model

/// The template's scaling limits come from the measured capacity model (`deploy/capacity.json`,
/// written by `bash tests/capacity/run.sh`): enough tasks of the size the model assumed, with the
/// claim loops it ran, for the target sale.
#[test]
fn the_scaling_limits_hold_the_capacity_models_sale() {
    let template = Template::load();
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../deploy/capacity.json"
        ))
        .expect("deploy/capacity.json (bash tests/capacity/run.sh writes it)"),
    )
    .expect("the capacity report is JSON");
    let tasks = &report["model"]["tasks"];
    let needed = |what: &str| tasks[what].as_f64().expect("a task count");
    let default = |parameter: &str| -> f64 {
        template.defaults[parameter]
            .parse()
            .unwrap_or_else(|_| panic!("{parameter} has a numeric default"))
    };
    let vcpu = tasks["vcpu_per_task"].as_f64().unwrap() * 1024.0;
    for (parameter, size) in [("WorkerCpu", vcpu), ("ApiCpu", vcpu)] {
        assert_eq!(
            default(parameter),
            size,
            "{parameter}: the task size the model assumed"
        );
    }
    for (parameter, role) in [("WorkerMaxTasks", "worker"), ("ApiMaxTasks", "api")] {
        assert!(
            default(parameter) >= needed(role),
            "{parameter} is {} but the capacity model needs {} {role} tasks",
            default(parameter),
            needed(role)
        );
    }
    let loops = containers(&template)
        .into_iter()
        .find_map(|(_, environment)| {
            environment
                .get("SEATCLAIM_CLAIM_LOOPS")
                .and_then(|value| scalar_text(value))
        })
        .expect("the worker sets SEATCLAIM_CLAIM_LOOPS");
    assert_eq!(
        loops.parse::<f64>().unwrap(),
        tasks["claim_loops"].as_f64().unwrap(),
        "the worker runs the claim loops the model measured"
    );
}
