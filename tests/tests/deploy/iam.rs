//! The deployment files: IAM.

use super::*;

#[test]
pub(crate) fn iam_policies_have_no_wildcards_and_name_real_indexes() {
    let template = Template::load();
    let names = template.names();
    let specs = table_specs(&names);
    let mut granted_indexes = BTreeSet::new();
    let mut roles = BTreeSet::new();
    for (role, properties) in template.resources("AWS::IAM::Role") {
        roles.insert(role.clone());
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
                        // The audit scans the jobs table (operators); the event list and
                        // the sweeper's open waitlists scan the events table: a few items
                        // per event.
                        let scanned = get_att(&statement["Resource"]).map(|(table, _)| table);
                        let allowed: &[&str] = match role.as_str() {
                            "OperatorRole" => &["JobsTable", "EventsTable"],
                            _ => &["EventsTable"],
                        };
                        assert!(
                            scanned.as_deref().is_some_and(|t| allowed.contains(&t)),
                            "{role}: scans only what it must, not {scanned:?}"
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
    assert_eq!(
        roles,
        BTreeSet::from(
            [
                "TaskExecutionRole",
                "ApiTaskRole",
                "WorkerTaskRole",
                "OperatorRole"
            ]
            .map(str::to_owned)
        ),
        "an execution role, and a task role each for the API, the worker and seatclaimctl"
    );
    for (id, task) in template.resources("AWS::ECS::TaskDefinition") {
        for field in ["TaskRoleArn", "ExecutionRoleArn"] {
            let (role, _) = get_att(&task[field]).unwrap_or_else(|| panic!("{id}: {field}"));
            assert!(
                roles.contains(&role),
                "{id}: {field} is a role checked here"
            );
        }
    }
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

/// The container of the task definition whose container runs `binary`.
pub(crate) fn container_running<'a>(template: &'a Template, binary: &str) -> (String, &'a Value) {
    let mut found = Vec::new();
    for (id, task) in template.resources("AWS::ECS::TaskDefinition") {
        for container in sequence(&task["ContainerDefinitions"]) {
            if container["Command"][0].as_str() == Some(binary) {
                found.push((id.clone(), container));
            }
        }
    }
    assert_eq!(found.len(), 1, "one task definition runs {binary}");
    found.remove(0)
}

/// A container's environment: name -> value.
pub(crate) fn environment_of(container: &Value) -> BTreeMap<String, &Value> {
    sequence(&container["Environment"])
        .iter()
        .map(|pair| (pair["Name"].as_str().unwrap().to_owned(), &pair["Value"]))
        .collect()
}

/// Every (action, resource) a role's policies allow. A resource is named by the logical id it
/// refers to (`!GetAtt SeatsTable.Arn` is "SeatsTable"), an index as "SeatsTable/index/by-block",
/// anything else as written.
pub(crate) fn grants(template: &Template, role: &str) -> BTreeSet<(String, String)> {
    let properties = &template.root["Resources"][role]["Properties"];
    assert!(!properties.is_null(), "no role {role}");
    let mut granted = BTreeSet::new();
    for policy in sequence(&properties["Policies"]) {
        for statement in sequence(&policy["PolicyDocument"]["Statement"]) {
            assert_eq!(
                statement["Effect"].as_str(),
                Some("Allow"),
                "{role}: task roles only allow"
            );
            let actions: Vec<String> = match &statement["Action"] {
                Value::String(action) => vec![action.clone()],
                other => sequence(other)
                    .iter()
                    .map(|a| a.as_str().unwrap().to_owned())
                    .collect(),
            };
            let resources: Vec<&Value> = match &statement["Resource"] {
                Value::Sequence(list) => list.iter().collect(),
                single => vec![single],
            };
            for resource in resources {
                let name = if let Some((id, _)) = get_att(resource) {
                    id
                } else if let Some((_, Value::String(pattern))) = intrinsic(resource) {
                    match pattern.split_once("/index/") {
                        Some((table, index)) => format!(
                            "{}/index/{index}",
                            table.trim_start_matches("${").trim_end_matches(".Arn}")
                        ),
                        None => pattern.clone(),
                    }
                } else {
                    scalar_text(resource).unwrap()
                };
                for action in &actions {
                    granted.insert((action.clone(), name.clone()));
                }
            }
        }
    }
    granted
}

pub(crate) fn pairs(list: &[(&str, &str)]) -> BTreeSet<(String, String)> {
    list.iter()
        .map(|(action, resource)| ((*action).to_owned(), (*resource).to_owned()))
        .collect()
}

/// What `seatclaimctl` alone does (DLQ replay and purge, event creation and waitlist closing,
/// audit), which the worker's role no longer grants. (The outbox table's base-table `Query`,
/// job history's read, is the worker's too: a waitlist's places live there.)
pub(crate) const OPERATOR_ONLY: &[(&str, &str)] = &[
    ("sqs:ReceiveMessage", "IntentDeadLetterQueue"),
    ("sqs:DeleteMessage", "IntentDeadLetterQueue"),
    ("sqs:ChangeMessageVisibility", "IntentDeadLetterQueue"),
    ("sqs:SendMessage", "IntentQueue"),
    ("dynamodb:PutItem", "EventsTable"),
    ("dynamodb:UpdateItem", "EventsTable"),
    ("dynamodb:BatchWriteItem", "SeatsTable"),
    ("dynamodb:Scan", "JobsTable"),
    ("dynamodb:Query", "SeatsTable/index/by-block"),
];

#[test]
pub(crate) fn the_api_writes_no_new_seats_and_operator_actions_have_their_own_role() {
    let template = Template::load();

    // The API: admission, job status, the seat map; confirm and cancel go to the workers, so it
    // reads and writes no seat item; no event creation.
    let api = grants(&template, "ApiTaskRole");
    for (action, resource) in [
        ("dynamodb:BatchWriteItem", "SeatsTable"),
        ("dynamodb:PutItem", "SeatsTable"),
        ("dynamodb:DeleteItem", "SeatsTable"),
        ("dynamodb:UpdateItem", "SeatsTable"),
        ("dynamodb:GetItem", "SeatsTable"),
        ("dynamodb:BatchGetItem", "SeatsTable"),
        ("dynamodb:Query", "SeatsTable/index/free-by-section"),
        ("dynamodb:PutItem", "EventsTable"),
        ("dynamodb:UpdateItem", "EventsTable"),
        ("dynamodb:BatchWriteItem", "EventsTable"),
        ("dynamodb:DeleteItem", "EventsTable"),
    ] {
        assert!(
            !api.contains(&(action.to_owned(), resource.to_owned())),
            "ApiTaskRole grants {action} on {resource}"
        );
    }
    let admission_and_settlement = pairs(&[
        ("sqs:SendMessage", "IntentQueue"),
        ("sqs:GetQueueUrl", "SettlementQueue"),
        ("sqs:SendMessage", "SettlementQueue"),
        ("dynamodb:GetItem", "EventsTable"),
        ("dynamodb:Query", "SeatsTable/index/by-block"),
        ("dynamodb:PutItem", "JobsTable"),
        ("dynamodb:UpdateItem", "JobsTable"),
        ("dynamodb:PutItem", "OutboxTable"),
        // a cancel serves the waitlist; a waiting job's position
        ("dynamodb:Query", "OutboxTable"),
        // the line's counts item (queue positions), added once a second
        ("dynamodb:UpdateItem", "OutboxTable"),
        // a pre-queue's entry under its gate's check, a waiting buyer's entry
        ("dynamodb:ConditionCheckItem", "OutboxTable"),
        // ... and a worker's answer to a settlement
        ("dynamodb:GetItem", "OutboxTable"),
        ("dynamodb:DeleteItem", "OutboxTable"),
        // the Stripe webhook's PaymentUnmatched
        ("events:PutEvents", "EventBus"),
    ]);
    let missing: Vec<_> = admission_and_settlement.difference(&api).collect();
    assert!(missing.is_empty(), "ApiTaskRole lacks {missing:?}");
    let (_, api_container) = container_running(&template, "seatclaim-api");
    assert_eq!(
        environment_of(api_container)
            .get("SEATCLAIM_API_CREATES_EVENTS")
            .and_then(|v| scalar_text(v)),
        Some("false".to_owned()),
        "the API is told that its role cannot create events"
    );

    // seatclaimctl: its own role, with event creation, the DLQ's commands, history and audit.
    let operator = grants(&template, "OperatorRole");
    let operations = pairs(&[
        // events create
        ("dynamodb:GetItem", "EventsTable"),
        ("dynamodb:PutItem", "EventsTable"),
        ("dynamodb:UpdateItem", "EventsTable"),
        ("dynamodb:BatchWriteItem", "SeatsTable"),
        // dlq list, replay, purge
        ("sqs:GetQueueUrl", "IntentDeadLetterQueue"),
        ("sqs:GetQueueAttributes", "IntentDeadLetterQueue"),
        ("sqs:ReceiveMessage", "IntentDeadLetterQueue"),
        ("sqs:DeleteMessage", "IntentDeadLetterQueue"),
        ("sqs:ChangeMessageVisibility", "IntentDeadLetterQueue"),
        ("sqs:GetQueueUrl", "IntentQueue"),
        ("sqs:GetQueueAttributes", "IntentQueue"),
        ("sqs:SendMessage", "IntentQueue"),
        ("dynamodb:GetItem", "JobsTable"),
        ("dynamodb:UpdateItem", "JobsTable"),
        ("dynamodb:PutItem", "OutboxTable"),
        // jobs show, audit
        ("dynamodb:Query", "OutboxTable"),
        ("dynamodb:Scan", "JobsTable"),
        ("dynamodb:Query", "SeatsTable/index/by-block"),
        ("dynamodb:Query", "OutboxTable/index/unpublished"),
    ]);
    let missing: Vec<_> = operations.difference(&operator).collect();
    assert!(missing.is_empty(), "OperatorRole lacks {missing:?}");
    assert!(
        !operator
            .iter()
            .any(|(action, _)| action == "events:PutEvents"),
        "seatclaimctl publishes nothing itself"
    );

    // The worker: claims, the sweeper, the relay and dead-lettering, and none of the above.
    let worker = grants(&template, "WorkerTaskRole");
    let leaked: Vec<_> = pairs(OPERATOR_ONLY)
        .intersection(&worker)
        .cloned()
        .collect();
    assert!(
        leaked.is_empty(),
        "WorkerTaskRole grants operator-only {leaked:?}"
    );
    let claims_and_dead_letters = pairs(&[
        ("sqs:ReceiveMessage", "IntentQueue"),
        ("sqs:DeleteMessage", "IntentQueue"),
        ("sqs:ChangeMessageVisibility", "IntentQueue"),
        ("sqs:SendMessage", "IntentDeadLetterQueue"),
        // the API's settlements, answered in the outbox table
        ("sqs:GetQueueUrl", "SettlementQueue"),
        ("sqs:ReceiveMessage", "SettlementQueue"),
        ("sqs:DeleteMessage", "SettlementQueue"),
        ("dynamodb:PutItem", "OutboxTable"),
        ("dynamodb:UpdateItem", "SeatsTable"),
        ("dynamodb:UpdateItem", "JobsTable"),
        ("dynamodb:Query", "SeatsTable/index/free-by-section"),
        ("dynamodb:Query", "JobsTable/index/held-by-deadline"),
        ("dynamodb:Query", "OutboxTable/index/unpublished"),
        // waitlists: joins, serving, the sweeper's open lines
        ("dynamodb:Query", "OutboxTable"),
        ("dynamodb:DeleteItem", "OutboxTable"),
        ("dynamodb:ConditionCheckItem", "OutboxTable"),
        ("dynamodb:Scan", "EventsTable"),
        ("events:PutEvents", "EventBus"),
    ]);
    let missing: Vec<_> = claims_and_dead_letters.difference(&worker).collect();
    assert!(missing.is_empty(), "WorkerTaskRole lacks {missing:?}");

    // Each binary runs with its own role.
    for (binary, role) in [
        ("seatclaim-api", "ApiTaskRole"),
        ("seatclaim-worker", "WorkerTaskRole"),
        ("seatclaimctl", "OperatorRole"),
    ] {
        let (task, _) = container_running(&template, binary);
        assert_eq!(
            get_att(&template.root["Resources"][task.as_str()]["Properties"]["TaskRoleArn"]),
            Some((role.to_owned(), "Arn".to_owned())),
            "{task} ({binary}) runs with {role}"
        );
    }
}

#[test]
pub(crate) fn the_operator_task_runs_seatclaimctl_with_the_workers_settings() {
    let template = Template::load();
    let (task_id, operator) = container_running(&template, "seatclaimctl");
    let (_, worker) = container_running(&template, "seatclaim-worker");
    let task = &template.root["Resources"][task_id.as_str()]["Properties"];
    assert_eq!(
        template.text(&task["Family"]),
        Some(format!("{}-operator", template.prefix()))
    );
    let command: Vec<&str> = sequence(&operator["Command"])
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        command,
        ["seatclaimctl", "--help"],
        "the default command only prints the help"
    );
    assert_eq!(
        operator["Image"], worker["Image"],
        "the worker image carries seatclaimctl"
    );
    let mut expected = environment_of(worker);
    for loop_only in ["SEATCLAIM_CLAIM_LOOPS", "SEATCLAIM_METRICS_LISTEN"] {
        assert!(
            expected.remove(loop_only).is_some(),
            "the worker sets {loop_only}"
        );
    }
    assert_eq!(
        environment_of(operator),
        expected,
        "seatclaimctl gets the worker's backend settings"
    );
    let logs = &operator["LogConfiguration"]["Options"];
    assert_eq!(logs["awslogs-stream-prefix"].as_str(), Some("operator"));
    assert_eq!(
        ref_target(&logs["awslogs-group"]),
        ref_target(&worker["LogConfiguration"]["Options"]["awslogs-group"]),
        "its output goes to the worker log group"
    );
    let output = &template.root["Outputs"]["OperatorTaskDefinitionArn"]["Value"];
    assert_eq!(ref_target(output), Some(task_id.as_str()));
}
