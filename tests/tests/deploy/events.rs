//! The deployment files: events.

use super::*;

#[test]
pub(crate) fn the_event_bus_and_every_pattern_match_the_code() {
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
