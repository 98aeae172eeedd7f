//! The deployment files: queues.

use super::*;

#[test]
pub(crate) fn queues_and_their_redrive_match_the_worker_settings() {
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
    // The API's settlements have a queue of their own, which the code finds by its name; a
    // settlement is stale in seconds, so it is never dead-lettered.
    let (_, settlements) = queues
        .get(&names.settlements_queue)
        .unwrap_or_else(|| panic!("no queue named {}", names.settlements_queue));
    assert!(
        settlements["RedrivePolicy"].is_null(),
        "settlements are dropped when stale, not dead-lettered"
    );

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
