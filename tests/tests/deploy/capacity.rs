//! The deployment files: capacity model.

use super::*;

/// The template's scaling limits come from the measured capacity model (`deploy/capacity.json`,
/// written by `bash tests/capacity/run.sh`): enough tasks of the size the model assumed, with the
/// claim loops it ran, for the target sale.
#[test]
pub(crate) fn the_scaling_limits_hold_the_capacity_models_sale() {
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
