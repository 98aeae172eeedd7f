//! The deployment files in `deploy/` agree with the code: this suite parses the CloudFormation
//! template and the compose file and compares them with what the binaries use, so renaming a
//! table, an index, a queue or a setting in the code fails here until the templates follow.
//!
//! - tables: names from `AwsNames::from_settings`, keys, attribute types and indexes from
//!   `table_specs` (every index projecting all attributes);
//! - queues: names, the redrive from the intent queue to its DLQ, and `maxReceiveCount` equal to
//!   `BackendSettings::max_receive_count()` for every `MaxAttempts` the template allows;
//! - the event bus's name and the event source in every rule and archive pattern;
//! - container settings: every `SEATCLAIM_*` variable a task definition (environment or ECS
//!   secret) or compose service sets is one its binary accepts (read from the binary's own
//!   `--help`);
//! - IAM: no wildcard actions or resources (but the one ECR login), index ARNs name real indexes;
//!   the API's role writes no new seats or events, `seatclaimctl` (the operator task, its own
//!   task definition) has its own role, and the worker's role lacks what only the operator does;
//! - the edge: no stack without a certificate unless `AllowPlainHttp` (the `Rules`), HTTP
//!   redirecting to HTTPS, a WAF rate-based rule per client address (the viewer's, for requests
//!   the page's distribution relays), access logs to a bucket;
//! - the seat map's rate rule on the page's distribution (cache hits never reach the load
//!   balancer): a CLOUDFRONT web ACL the stack creates in us-east-1 or is given
//!   (`PageWebAclArn`), the same in `deploy/cloudformation/page-waf.yaml`;
//! - the buyer web page on CloudFront (`UiDistribution`): the page from a private bucket through
//!   an origin access control, the API's paths to the load balancer (uncached but the seat map,
//!   which follows the API's `Cache-Control` per section), HTTPS for viewers, the function that
//!   answers page paths with `index.html`, none of it without `UiDistribution`, and
//!   `deploy/publish-ui.sh` uploading every file of `api/ui`;
//! - identity: the Cognito pool, its admin and payments scopes (the API's), the buyers' public
//!   client and the operators' and payments service's client-credentials clients, and the
//!   issuer settings the API gets;
//! - Stripe's webhook signing secret: in Secrets Manager, given to the API container alone as an
//!   ECS secret, readable by the execution role and by no task role;
//! - the Dockerfile copies every workspace member's manifest and builds every binary deployed.
//!
//! CloudFormation's short-form tags (`!Sub`, `!Ref`, `!GetAtt`, ...) are kept by the YAML parser
//! as tagged values; [`intrinsic`] reads them and their long forms (`Fn::Sub:`) alike. Conditions,
//! rules and `Fn::If` are evaluated for given parameter values ([`Template::deployed`]), so a test
//! can look at the stack a deployment with or without a certificate would create; the pseudo
//! parameter `AWS::Region` is [`REGION`] unless a test deploys elsewhere.

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
use seatclaim_shared::identity::{DEFAULT_ADMIN_SCOPE, PAYMENTS_SCOPE};
use serde_norway::{Mapping, Value};

const TEMPLATE: &str = "deploy/cloudformation/seatclaim.yaml";
/// The CloudFront web ACL for a stack outside us-east-1, deployed in us-east-1.
const PAGE_WAF: &str = "deploy/cloudformation/page-waf.yaml";
const COMPOSE: &str = "deploy/compose.yaml";
const DOCKERFILE: &str = "deploy/Dockerfile";

/// The API's setting that holds Stripe's webhook signing secret (`whsec_...`).
const STRIPE_WEBHOOK_SECRET: &str = "SEATCLAIM_PAYMENTS_STRIPE_WEBHOOK_SECRET";

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
        Self::load_from(TEMPLATE)
    }

    fn load_from(relative: &str) -> Self {
        let root = parse(relative);
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

/// `DependsOn` as a list (CloudFormation takes one id or a list).
fn depends_on(resource: &Value) -> Vec<&str> {
    match &resource["DependsOn"] {
        Value::String(id) => vec![id.as_str()],
        other => sequence(other).iter().filter_map(Value::as_str).collect(),
    }
}

// ---------------------------------------------------------------------- conditions and rules

/// A certificate, for the stacks that have one.
const CERTIFICATE: &str = "arn:aws:acm:eu-west-1:111122223333:certificate/abcd";

/// The API's own name, covered by [`CERTIFICATE`]: the page's distribution reaches the API by it.
const API_DOMAIN: &str = "api.tickets.example.com";

/// The Region of a deployment, unless a test names another (`("AWS::Region", ...)`): not
/// us-east-1, where the stack also creates the page distribution's CloudFront web ACL.
const REGION: &str = "eu-west-1";

/// Parameter name -> the value a deployment passes (and pseudo parameters, `AWS::Region`).
type Parameters = BTreeMap<String, String>;

impl Template {
    /// The parameter values of a deployment in [`REGION`]: every default, with these overrides.
    fn parameters(&self, overrides: &[(&str, &str)]) -> Parameters {
        let mut values = self.defaults.clone();
        values.insert("AWS::Region".to_owned(), REGION.to_owned());
        for (name, value) in overrides {
            assert!(
                name == &"AWS::Region" || self.root["Parameters"].get(*name).is_some(),
                "the template has no parameter {name}"
            );
            values.insert((*name).to_owned(), (*value).to_owned());
        }
        values
    }

    /// A named entry of `Conditions`, evaluated.
    fn condition(&self, name: &str, parameters: &Parameters) -> bool {
        let expression = self.root["Conditions"]
            .get(name)
            .unwrap_or_else(|| panic!("the template has no condition {name}"));
        self.holds(expression, parameters)
    }

    /// A condition or rule expression (`Fn::Equals`, `Fn::Not`, `Fn::And`, `Fn::Or`,
    /// `Condition`) evaluated for these parameter values.
    fn holds(&self, expression: &Value, parameters: &Parameters) -> bool {
        if let Some(name) = expression
            .as_mapping()
            .filter(|mapping| mapping.len() == 1)
            .and_then(|mapping| mapping.get("Condition"))
            .and_then(Value::as_str)
        {
            return self.condition(name, parameters);
        }
        let (function, argument) = intrinsic(expression)
            .unwrap_or_else(|| panic!("not a condition function: {expression:?}"));
        let arguments = sequence(argument);
        match function.as_str() {
            "Equals" => {
                assert_eq!(arguments.len(), 2, "Fn::Equals takes two values");
                self.operand(&arguments[0], parameters) == self.operand(&arguments[1], parameters)
            }
            "Not" => !self.holds(&arguments[0], parameters),
            "And" => arguments.iter().all(|a| self.holds(a, parameters)),
            "Or" => arguments.iter().any(|a| self.holds(a, parameters)),
            "Condition" => self.condition(argument.as_str().unwrap(), parameters),
            other => panic!("Fn::{other} cannot be evaluated here"),
        }
    }

    /// A value compared by `Fn::Equals`: a parameter's value or a literal.
    fn operand(&self, value: &Value, parameters: &Parameters) -> String {
        match ref_target(value) {
            Some(name) => parameters
                .get(name)
                .cloned()
                .unwrap_or_else(|| panic!("no value for {name}")),
            None => scalar_text(value).unwrap_or_else(|| panic!("cannot compare {value:?}")),
        }
    }

    /// The `AssertDescription` of every rule assertion that these parameter values break:
    /// CloudFormation refuses the stack when there is any.
    fn refusals(&self, parameters: &Parameters) -> Vec<String> {
        let mut refused = Vec::new();
        let Some(rules) = self.root.get("Rules").and_then(Value::as_mapping) else {
            return refused;
        };
        for (_, rule) in rules {
            if rule
                .get("RuleCondition")
                .is_some_and(|condition| !self.holds(condition, parameters))
            {
                continue;
            }
            for assertion in sequence(&rule["Assertions"]) {
                if !self.holds(&assertion["Assert"], parameters) {
                    refused.push(scalar_text(&assertion["AssertDescription"]).unwrap_or_default());
                }
            }
        }
        refused
    }

    /// `value` as deployed with these parameter values: each `Fn::If` becomes the branch its
    /// condition picks, and an `AWS::NoValue` drops its key or list entry. Other functions are
    /// kept as written.
    fn resolve(&self, value: &Value, parameters: &Parameters) -> Option<Value> {
        if ref_target(value) == Some("AWS::NoValue") {
            return None;
        }
        if let Some((function, argument)) = intrinsic(value) {
            if function != "If" {
                return Some(value.clone());
            }
            let arguments = sequence(argument);
            assert_eq!(
                arguments.len(),
                3,
                "Fn::If takes a condition and two values"
            );
            let condition = arguments[0].as_str().expect("Fn::If names a condition");
            let chosen = if self.condition(condition, parameters) {
                &arguments[1]
            } else {
                &arguments[2]
            };
            return self.resolve(chosen, parameters);
        }
        Some(match value {
            Value::Sequence(items) => Value::Sequence(
                items
                    .iter()
                    .filter_map(|item| self.resolve(item, parameters))
                    .collect(),
            ),
            Value::Mapping(mapping) => Value::Mapping(
                mapping
                    .iter()
                    .filter_map(|(key, item)| Some((key.clone(), self.resolve(item, parameters)?)))
                    .collect(),
            ),
            other => other.clone(),
        })
    }

    /// The resources a deployment with these parameter values creates (each whose condition
    /// holds), resolved: logical id -> resource.
    fn deployed(&self, parameters: &Parameters) -> BTreeMap<String, Value> {
        self.root["Resources"]
            .as_mapping()
            .unwrap()
            .iter()
            .filter(|(_, resource)| {
                resource["Condition"]
                    .as_str()
                    .is_none_or(|condition| self.condition(condition, parameters))
            })
            .map(|(id, resource)| {
                (
                    id.as_str().unwrap().to_owned(),
                    self.resolve(resource, parameters).unwrap(),
                )
            })
            .collect()
    }

    /// The one resource of a type: (logical id, properties).
    fn only(&self, kind: &str) -> (String, &Value) {
        let mut found = self.resources(kind);
        assert_eq!(found.len(), 1, "the template has one {kind}");
        found.remove(0)
    }
}

/// The deployed resources of a type: (logical id, properties).
fn deployed_of<'a>(deployed: &'a BTreeMap<String, Value>, kind: &str) -> Vec<(&'a str, &'a Value)> {
    deployed
        .iter()
        .filter(|(_, resource)| resource["Type"].as_str() == Some(kind))
        .map(|(id, resource)| (id.as_str(), &resource["Properties"]))
        .collect()
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

    for (table, what) in [
        (&names.seats_table, "the inventory"),
        (&names.jobs_table, "the record of sales"),
    ] {
        assert_eq!(
            tables[table.as_str()]["DeletionProtectionEnabled"].as_bool(),
            Some(true),
            "{what} is deletion-protected"
        );
    }
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

/// The environment variables a binary reads, from clap's `[env: NAME=]` lines in `--help`
/// (`[env: NAME]` for a secret's, whose value help never shows).
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

// ------------------------------------------------------------------------------------- IAM

#[test]
fn iam_policies_have_no_wildcards_and_name_real_indexes() {
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
                        // The audit scans the jobs table (operators); the event list scans
                        // the events table (the API): a few items per event.
                        let scanned = get_att(&statement["Resource"]).map(|(table, _)| table);
                        let allowed = match role.as_str() {
                            "ApiTaskRole" => "EventsTable",
                            _ => "JobsTable",
                        };
                        assert_eq!(
                            scanned.as_deref(),
                            Some(allowed),
                            "{role}: scans only what it must"
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
fn container_running<'a>(template: &'a Template, binary: &str) -> (String, &'a Value) {
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
fn environment_of(container: &Value) -> BTreeMap<String, &Value> {
    sequence(&container["Environment"])
        .iter()
        .map(|pair| (pair["Name"].as_str().unwrap().to_owned(), &pair["Value"]))
        .collect()
}

/// Every (action, resource) a role's policies allow. A resource is named by the logical id it
/// refers to (`!GetAtt SeatsTable.Arn` is "SeatsTable"), an index as "SeatsTable/index/by-block",
/// anything else as written.
fn grants(template: &Template, role: &str) -> BTreeSet<(String, String)> {
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

fn pairs(list: &[(&str, &str)]) -> BTreeSet<(String, String)> {
    list.iter()
        .map(|(action, resource)| ((*action).to_owned(), (*resource).to_owned()))
        .collect()
}

/// What `seatclaimctl` alone does (DLQ replay and purge, event creation, job history, audit),
/// which the worker's role no longer grants.
const OPERATOR_ONLY: &[(&str, &str)] = &[
    ("sqs:ReceiveMessage", "IntentDeadLetterQueue"),
    ("sqs:DeleteMessage", "IntentDeadLetterQueue"),
    ("sqs:ChangeMessageVisibility", "IntentDeadLetterQueue"),
    ("sqs:SendMessage", "IntentQueue"),
    ("dynamodb:PutItem", "EventsTable"),
    ("dynamodb:UpdateItem", "EventsTable"),
    ("dynamodb:BatchWriteItem", "SeatsTable"),
    ("dynamodb:Scan", "JobsTable"),
    ("dynamodb:Query", "OutboxTable"),
    ("dynamodb:Query", "SeatsTable/index/by-block"),
];

#[test]
fn the_api_writes_no_new_seats_and_operator_actions_have_their_own_role() {
    let template = Template::load();

    // The API: admission, job status, confirm and cancel, the seat map; no event creation.
    let api = grants(&template, "ApiTaskRole");
    for (action, resource) in [
        ("dynamodb:BatchWriteItem", "SeatsTable"),
        ("dynamodb:PutItem", "SeatsTable"),
        ("dynamodb:DeleteItem", "SeatsTable"),
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
        ("dynamodb:GetItem", "EventsTable"),
        ("dynamodb:BatchGetItem", "SeatsTable"),
        ("dynamodb:UpdateItem", "SeatsTable"),
        ("dynamodb:Query", "SeatsTable/index/by-block"),
        ("dynamodb:PutItem", "JobsTable"),
        ("dynamodb:UpdateItem", "JobsTable"),
        ("dynamodb:PutItem", "OutboxTable"),
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
        ("dynamodb:UpdateItem", "SeatsTable"),
        ("dynamodb:UpdateItem", "JobsTable"),
        ("dynamodb:Query", "SeatsTable/index/free-by-section"),
        ("dynamodb:Query", "JobsTable/index/held-by-deadline"),
        ("dynamodb:Query", "OutboxTable/index/unpublished"),
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
fn the_operator_task_runs_seatclaimctl_with_the_workers_settings() {
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

// ------------------------------------------------------------------------------------- edge

#[test]
fn the_stack_refuses_plain_http_unless_a_test_stack_allows_it() {
    let template = Template::load();
    let allowed: BTreeSet<String> =
        sequence(&template.root["Parameters"]["AllowPlainHttp"]["AllowedValues"])
            .iter()
            .filter_map(scalar_text)
            .collect();
    assert_eq!(
        allowed,
        BTreeSet::from(["true", "false"].map(str::to_owned))
    );
    assert_eq!(template.defaults["AllowPlainHttp"], "false");
    assert_eq!(template.defaults["CertificateArn"], "");
    for (certificate, allow, refused) in [
        ("", "false", true),
        ("", "true", false),
        (CERTIFICATE, "false", false),
        (CERTIFICATE, "true", false),
    ] {
        let parameters = template.parameters(&[
            ("CertificateArn", certificate),
            ("AllowPlainHttp", allow),
            ("ApiDomainName", API_DOMAIN),
        ]);
        let refusals = template.refusals(&parameters);
        assert_eq!(
            !refusals.is_empty(),
            refused,
            "CertificateArn {certificate:?}, AllowPlainHttp {allow}: {refusals:?}"
        );
        if refused {
            assert!(
                refusals
                    .iter()
                    .any(|why| why.contains("CertificateArn") && why.contains("AllowPlainHttp")),
                "the refusal says what to pass: {refusals:?}"
            );
        }
    }
}

#[test]
fn with_a_certificate_http_redirects_to_https_and_https_forwards() {
    let template = Template::load();
    let (target_group, _) = template.only("AWS::ElasticLoadBalancingV2::TargetGroup");
    let forwards = |listener: &Value| {
        let actions = sequence(&listener["DefaultActions"]);
        actions.len() == 1
            && actions[0]["Type"].as_str() == Some("forward")
            && ref_target(&actions[0]["TargetGroupArn"]) == Some(target_group.as_str())
    };
    for certificate in [true, false] {
        let parameters = if certificate {
            template.parameters(&[
                ("CertificateArn", CERTIFICATE),
                ("ApiDomainName", API_DOMAIN),
            ])
        } else {
            template.parameters(&[("AllowPlainHttp", "true")])
        };
        assert!(template.refusals(&parameters).is_empty());
        let deployed = template.deployed(&parameters);
        let listeners: BTreeMap<String, (&str, &Value)> =
            deployed_of(&deployed, "AWS::ElasticLoadBalancingV2::Listener")
                .into_iter()
                .map(|(id, listener)| (scalar_text(&listener["Port"]).unwrap(), (id, listener)))
                .collect();
        let forwarding: Vec<&str> = listeners
            .values()
            .filter(|(_, listener)| forwards(listener))
            .map(|(id, _)| *id)
            .collect();
        assert_eq!(forwarding.len(), 1, "one listener forwards to the API");
        let ports: BTreeSet<&str> = listeners.keys().map(String::as_str).collect();
        if certificate {
            assert_eq!(ports, BTreeSet::from(["443", "80"]));
            let (https_id, https) = listeners["443"];
            assert_eq!(https["Protocol"].as_str(), Some("HTTPS"));
            assert_eq!(
                ref_target(&https["Certificates"][0]["CertificateArn"]),
                Some("CertificateArn")
            );
            assert!(
                https["SslPolicy"]
                    .as_str()
                    .is_some_and(|policy| policy.contains("TLS13")),
                "TLS 1.3 policy"
            );
            assert_eq!(forwarding, [https_id], "443 forwards to the API");
            let (_, http) = listeners["80"];
            assert_eq!(http["Protocol"].as_str(), Some("HTTP"));
            let actions = sequence(&http["DefaultActions"]);
            assert_eq!(actions.len(), 1, "port 80 only redirects");
            assert_eq!(actions[0]["Type"].as_str(), Some("redirect"));
            let redirect = &actions[0]["RedirectConfig"];
            assert_eq!(redirect["Protocol"].as_str(), Some("HTTPS"));
            assert_eq!(scalar_text(&redirect["Port"]).as_deref(), Some("443"));
            assert_eq!(redirect["StatusCode"].as_str(), Some("HTTP_301"));
        } else {
            assert_eq!(
                ports,
                BTreeSet::from(["80"]),
                "no HTTPS without a certificate"
            );
            let (http_id, http) = listeners["80"];
            assert_eq!(http["Protocol"].as_str(), Some("HTTP"));
            assert_eq!(
                forwarding,
                [http_id],
                "a test stack serves plain HTTP on 80"
            );
        }

        // /metrics is hidden on whichever listener forwards.
        let hiding: Vec<&str> = deployed_of(&deployed, "AWS::ElasticLoadBalancingV2::ListenerRule")
            .into_iter()
            .filter(|(_, rule)| {
                sequence(&rule["Conditions"]).iter().any(|condition| {
                    sequence(&condition["PathPatternConfig"]["Values"])
                        .iter()
                        .any(|path| path.as_str() == Some("/metrics"))
                }) && rule["Actions"][0]["FixedResponseConfig"]["StatusCode"].as_str()
                    == Some("404")
            })
            .filter_map(|(_, rule)| ref_target(&rule["ListenerArn"]))
            .collect();
        assert_eq!(
            hiding, forwarding,
            "the forwarding listener answers 404 for /metrics"
        );

        // The load balancer's security group opens exactly the listeners' ports.
        let (_, balancer) = deployed_of(&deployed, "AWS::ElasticLoadBalancingV2::LoadBalancer")[0];
        let group = ref_target(&balancer["SecurityGroups"][0]).unwrap();
        let opened: BTreeSet<String> =
            sequence(&deployed[group]["Properties"]["SecurityGroupIngress"])
                .iter()
                .map(|rule| {
                    assert_eq!(rule["FromPort"], rule["ToPort"], "{group}: one port a rule");
                    scalar_text(&rule["FromPort"]).unwrap()
                })
                .collect();
        assert_eq!(
            opened,
            listeners.keys().cloned().collect::<BTreeSet<_>>(),
            "{group}"
        );

        let url = template
            .resolve(&template.root["Outputs"]["ApiUrl"]["Value"], &parameters)
            .unwrap();
        let scheme = if certificate { "https://" } else { "http://" };
        assert!(
            template
                .text(&url)
                .is_some_and(|url| url.starts_with(scheme)),
            "ApiUrl: {url:?}"
        );
    }
}

/// One buyer's rate across every API task: a rate-based rule keyed on the bearer token, beside
/// the per-address ones, on every stack.
#[test]
fn a_waf_rule_limits_each_bearer_token_across_the_tasks() {
    let template = Template::load();
    let acl_id = web_acl_of_scope(&template, "REGIONAL");
    for distribution in ["false", "true"] {
        let parameters = template.parameters(&[
            ("UiDistribution", distribution),
            ("CertificateArn", CERTIFICATE),
            ("ApiDomainName", API_DOMAIN),
        ]);
        let deployed = template.deployed(&parameters);
        let by_token: Vec<&Value> = sequence(&deployed[acl_id.as_str()]["Properties"]["Rules"])
            .iter()
            .map(|rule| &rule["Statement"]["RateBasedStatement"])
            .filter(|statement| statement["AggregateKeyType"].as_str() == Some("CUSTOM_KEYS"))
            .collect();
        assert_eq!(by_token.len(), 1, "one rule counts bearer tokens");
        let keys = sequence(&by_token[0]["CustomKeys"]);
        assert_eq!(keys.len(), 1, "the token alone is the key");
        assert!(
            keys[0]["Header"]["Name"]
                .as_str()
                .is_some_and(|name| name.eq_ignore_ascii_case("authorization")),
            "{keys:?}"
        );
        assert_eq!(
            ref_target(&by_token[0]["Limit"]),
            Some("WafRequestsPerFiveMinutesPerBuyer")
        );
        assert_eq!(by_token[0]["EvaluationWindowSec"].as_u64(), Some(300));
    }
}

/// The logical id of the template's one web ACL of this scope (REGIONAL or CLOUDFRONT).
fn web_acl_of_scope(template: &Template, scope: &str) -> String {
    let found: Vec<String> = template
        .resources("AWS::WAFv2::WebACL")
        .into_iter()
        .filter(|(_, acl)| acl["Scope"].as_str() == Some(scope))
        .map(|(id, _)| id)
        .collect();
    assert_eq!(found.len(), 1, "one {scope} web ACL: {found:?}");
    found[0].clone()
}

#[test]
fn a_waf_web_acl_limits_each_client_address_at_the_load_balancer() {
    let template = Template::load();
    let (balancer, _) = template.only("AWS::ElasticLoadBalancingV2::LoadBalancer");
    let (association_id, association) = template.only("AWS::WAFv2::WebACLAssociation");
    assert_eq!(
        ref_target(&association["ResourceArn"]),
        Some(balancer.as_str()),
        "{association_id}: the web ACL protects the load balancer"
    );
    let (acl_id, attribute) = get_att(&association["WebACLArn"]).unwrap();
    assert_eq!(attribute, "Arn");
    assert_eq!(template.resource_type(&acl_id), Some("AWS::WAFv2::WebACL"));
    for id in [&acl_id, &association_id] {
        assert!(
            template.root["Resources"][id.as_str()]["Condition"].is_null(),
            "{id}: every stack has it"
        );
    }

    for distribution in [false, true] {
        let parameters = template.parameters(&[
            (
                "UiDistribution",
                if distribution { "true" } else { "false" },
            ),
            ("CertificateArn", CERTIFICATE),
            ("ApiDomainName", API_DOMAIN),
        ]);
        let deployed = template.deployed(&parameters);
        let acl = &deployed[acl_id.as_str()]["Properties"];
        assert_eq!(
            acl["Scope"].as_str(),
            Some("REGIONAL"),
            "a load balancer's web ACL"
        );
        assert!(acl["DefaultAction"].get("Allow").is_some(), "others pass");

        let rate_rules: Vec<&Value> = sequence(&acl["Rules"])
            .iter()
            .filter(|rule| {
                let statement = &rule["Statement"]["RateBasedStatement"];
                statement.is_mapping()
                    && statement["AggregateKeyType"].as_str() != Some("CUSTOM_KEYS")
            })
            .collect();
        let by_address: Vec<&Value> = rate_rules
            .iter()
            .copied()
            .filter(|rule| {
                rule["Statement"]["RateBasedStatement"]["AggregateKeyType"].as_str() == Some("IP")
            })
            .collect();
        assert_eq!(by_address.len(), 1, "one rule counts source addresses");
        for rule in &rate_rules {
            let statement = &rule["Statement"]["RateBasedStatement"];
            assert_eq!(
                ref_target(&statement["Limit"]),
                Some("WafRequestsPerFiveMinutesPerIp")
            );
            assert_eq!(
                statement["EvaluationWindowSec"].as_u64(),
                Some(300),
                "the parameter's five minutes"
            );
            assert_eq!(
                rule["Action"]["Block"]["CustomResponse"]["ResponseCode"].as_u64(),
                Some(429),
                "a limited client is told to slow down"
            );
        }
        let by_address = &by_address[0]["Statement"]["RateBasedStatement"];

        if !distribution {
            // The load balancer is the edge: the source address is the client's own.
            assert_eq!(rate_rules.len(), 1, "one rate-based rule");
            assert!(
                by_address.get("ScopeDownStatement").is_none(),
                "every request counts"
            );
            continue;
        }

        // Through the distribution, the source is a CloudFront server shared by many viewers:
        // requests bearing the distribution's origin header are counted per viewer address
        // (which the distribution writes), every other request per source address as before.
        assert_eq!(rate_rules.len(), 2, "per source and per viewer address");
        let (_, config) = deployed_distribution(&deployed);
        let api_origin = origin_of(config, "/v1/*");
        let secret: Vec<(&str, &Value)> = sequence(&api_origin["OriginCustomHeaders"])
            .iter()
            .map(|header| {
                (
                    header["HeaderName"].as_str().unwrap(),
                    &header["HeaderValue"],
                )
            })
            .collect();
        assert_eq!(
            secret.len(),
            1,
            "the load balancer origin adds one header of its own"
        );
        let (secret_header, secret_value) = secret[0];
        assert!(
            intrinsic(secret_value).is_some()
                && format!("{secret_value:?}").contains("AWS::StackId"),
            "the origin header's value is the stack's own, not a literal of this public file: \
             {secret_value:?}"
        );
        let bears_the_secret = |statement: &Value| {
            let matched = &statement["ByteMatchStatement"];
            matched["FieldToMatch"]["SingleHeader"]["Name"]
                .as_str()
                .is_some_and(|name| name.eq_ignore_ascii_case(secret_header))
                && matched["PositionalConstraint"].as_str() == Some("EXACTLY")
                && &matched["SearchString"] == secret_value
        };
        assert!(
            bears_the_secret(&by_address["ScopeDownStatement"]["NotStatement"]["Statement"]),
            "the source-address rule counts every request but the distribution's: {:?}",
            by_address["ScopeDownStatement"]
        );
        let by_viewer: Vec<&Value> = rate_rules
            .iter()
            .map(|rule| &rule["Statement"]["RateBasedStatement"])
            .filter(|statement| statement["AggregateKeyType"].as_str() == Some("FORWARDED_IP"))
            .collect();
        assert_eq!(by_viewer.len(), 1, "one rule counts viewer addresses");
        let by_viewer = by_viewer[0];
        assert!(
            bears_the_secret(&by_viewer["ScopeDownStatement"]),
            "only requests from the distribution are counted by the address they name: {:?}",
            by_viewer["ScopeDownStatement"]
        );
        let viewer_header = by_viewer["ForwardedIPConfig"]["HeaderName"]
            .as_str()
            .unwrap()
            .to_ascii_lowercase();
        assert_ne!(
            viewer_header, "x-forwarded-for",
            "its first address is whatever the viewer sent"
        );

        // The distribution writes that header, from CloudFront's own view of the viewer, on
        // every request it sends to the load balancer, and the request carries it there (WAF
        // skips the rule for a request without it).
        for (path, behavior) in behaviors(config) {
            if behavior["TargetOriginId"] != api_origin["Id"] {
                continue;
            }
            let functions: Vec<&str> = sequence(&behavior["FunctionAssociations"])
                .iter()
                .filter(|f| f["EventType"].as_str() == Some("viewer-request"))
                .filter_map(|f| get_att(&f["FunctionARN"]).map(|(id, _)| id))
                .map(|id| {
                    template.root["Resources"][id.as_str()]["Properties"]["FunctionCode"]
                        .as_str()
                        .unwrap()
                })
                .collect();
            assert_eq!(functions.len(), 1, "{path}: a viewer-request function");
            let code = functions[0];
            assert!(
                code.contains(&format!("request.headers['{viewer_header}']"))
                    && code.contains("event.viewer.ip"),
                "{path}: the function sets {viewer_header} to the viewer's address: {code}"
            );
            let forwarded = forwarded_headers(&template, &behavior["OriginRequestPolicyId"]);
            assert!(
                forwarded.includes(&viewer_header),
                "{path}: the origin request carries {viewer_header}"
            );
        }
    }

    let parameter = &template.root["Parameters"]["WafRequestsPerFiveMinutesPerIp"];
    let minimum = parameter["MinValue"].as_u64().unwrap();
    let default: u64 = template.defaults["WafRequestsPerFiveMinutesPerIp"]
        .parse()
        .unwrap();
    assert!(minimum >= 10, "WAF's smallest limit is 10");
    assert!(default >= minimum);
}

#[test]
fn the_load_balancer_logs_its_requests_to_the_stacks_bucket() {
    let template = Template::load();
    let (balancer_id, balancer) = template.only("AWS::ElasticLoadBalancingV2::LoadBalancer");
    let attributes: BTreeMap<&str, &Value> = sequence(&balancer["LoadBalancerAttributes"])
        .iter()
        .map(|pair| (pair["Key"].as_str().unwrap(), &pair["Value"]))
        .collect();
    assert_eq!(
        attributes
            .get("access_logs.s3.enabled")
            .and_then(|v| scalar_text(v)),
        Some("true".to_owned())
    );
    let bucket = attributes
        .get("access_logs.s3.bucket")
        .and_then(|v| ref_target(v))
        .expect("the logs go to a bucket of the stack");
    assert_eq!(template.resource_type(bucket), Some("AWS::S3::Bucket"));
    let prefix = attributes
        .get("access_logs.s3.prefix")
        .and_then(|v| scalar_text(v))
        .expect("a prefix");
    assert!(
        !prefix.is_empty() && !prefix.contains("AWSLogs"),
        "ELB adds AWSLogs/ itself"
    );

    let properties = &template.root["Resources"][bucket]["Properties"];
    let encryption = sequence(&properties["BucketEncryption"]["ServerSideEncryptionConfiguration"]);
    assert_eq!(
        encryption[0]["ServerSideEncryptionByDefault"]["SSEAlgorithm"].as_str(),
        Some("AES256"),
        "ALB log delivery supports SSE-S3 only"
    );
    for setting in [
        "BlockPublicAcls",
        "BlockPublicPolicy",
        "IgnorePublicAcls",
        "RestrictPublicBuckets",
    ] {
        assert_eq!(
            properties["PublicAccessBlockConfiguration"][setting].as_bool(),
            Some(true),
            "{setting}"
        );
    }
    let expiring: Vec<Option<&str>> = sequence(&properties["LifecycleConfiguration"]["Rules"])
        .iter()
        .filter(|rule| rule["Status"].as_str() == Some("Enabled"))
        .filter(|rule| !rule["ExpirationInDays"].is_null())
        .map(|rule| ref_target(&rule["ExpirationInDays"]))
        .collect();
    assert_eq!(
        expiring,
        [Some("AccessLogRetentionDays")],
        "one rule expires the logs after AccessLogRetentionDays"
    );
    assert_eq!(
        template.root["Resources"][bucket]["DeletionPolicy"].as_str(),
        Some("Retain"),
        "the logs outlive the stack"
    );

    // The bucket policy lets Elastic Load Balancing write there, and exists before the load
    // balancer (enabling the logs writes a test object).
    let policies: Vec<(String, &Value)> = template
        .resources("AWS::S3::BucketPolicy")
        .into_iter()
        .filter(|(_, policy)| ref_target(&policy["Bucket"]) == Some(bucket))
        .collect();
    assert_eq!(policies.len(), 1, "{bucket} has a bucket policy");
    let (policy_id, policy) = &policies[0];
    assert!(
        depends_on(&template.root["Resources"][balancer_id.as_str()]).contains(&policy_id.as_str()),
        "{balancer_id} depends on {policy_id}"
    );
    let expected = format!("${{{bucket}.Arn}}/{prefix}/AWSLogs/${{AWS::AccountId}}/*");
    let delivery: Vec<&Value> = sequence(&policy["PolicyDocument"]["Statement"])
        .iter()
        .filter(|statement| {
            statement["Effect"].as_str() == Some("Allow")
                && statement["Principal"]["Service"].as_str()
                    == Some("logdelivery.elasticloadbalancing.amazonaws.com")
        })
        .collect();
    assert_eq!(delivery.len(), 1, "the log delivery service may write");
    assert_eq!(delivery[0]["Action"].as_str(), Some("s3:PutObject"));
    assert_eq!(
        intrinsic(&delivery[0]["Resource"]).and_then(|(_, pattern)| pattern.as_str()),
        Some(expected.as_str()),
        "only under the load balancer's prefix of this account"
    );
}

// ----------------------------------------------------------------------- the page on CloudFront

/// CloudFront's managed policies the distribution uses, by their documented ids (CloudFront
/// developer guide, "Use managed cache policies" and "Use managed origin request policies").
const MANAGED_POLICIES: &[(&str, &str)] = &[
    ("CachingOptimized", "658327ea-f89d-4fab-a63d-7e88639e58f6"),
    ("CachingDisabled", "4135ea2d-6df8-44a3-9df3-4b5a84be39ad"),
    (
        "AllViewerExceptHostHeader",
        "b689b0a8-53d0-40ab-baf2-68738e2966ac",
    ),
];

/// Every method CloudFront can pass to an origin.
const ALL_METHODS: [&str; 7] = ["GET", "HEAD", "OPTIONS", "PUT", "POST", "PATCH", "DELETE"];

const PUBLISH_UI: &str = "deploy/publish-ui.sh";
const UI_DIR: &str = "api/ui";

/// The parameters of a stack with the page's distribution, with or without a certificate.
fn ui_stack(template: &Template, certificate: bool) -> Parameters {
    let parameters = if certificate {
        template.parameters(&[
            ("UiDistribution", "true"),
            ("CertificateArn", CERTIFICATE),
            ("ApiDomainName", API_DOMAIN),
        ])
    } else {
        template.parameters(&[("UiDistribution", "true"), ("AllowPlainHttp", "true")])
    };
    assert!(template.refusals(&parameters).is_empty());
    parameters
}

/// The one deployed distribution: (logical id, `DistributionConfig`).
fn deployed_distribution(deployed: &BTreeMap<String, Value>) -> (&str, &Value) {
    let found = deployed_of(deployed, "AWS::CloudFront::Distribution");
    assert_eq!(found.len(), 1, "the stack has one distribution");
    (found[0].0, &found[0].1["DistributionConfig"])
}

/// Every cache behavior, in the order CloudFront tries them (the ordered ones, then the
/// default): (path pattern, or "default", behavior).
fn behaviors(config: &Value) -> Vec<(String, &Value)> {
    let mut all: Vec<(String, &Value)> = sequence(&config["CacheBehaviors"])
        .iter()
        .map(|behavior| {
            (
                behavior["PathPattern"].as_str().unwrap().to_owned(),
                behavior,
            )
        })
        .collect();
    all.push(("default".to_owned(), &config["DefaultCacheBehavior"]));
    all
}

fn behavior<'a>(config: &'a Value, path: &str) -> &'a Value {
    behaviors(config)
        .into_iter()
        .find(|(pattern, _)| pattern == path)
        .unwrap_or_else(|| panic!("the distribution has no behavior for {path}"))
        .1
}

/// The origin a behavior sends its requests to.
fn origin_of<'a>(config: &'a Value, path: &str) -> &'a Value {
    let target = &behavior(config, path)["TargetOriginId"];
    let found: Vec<&Value> = sequence(&config["Origins"])
        .iter()
        .filter(|origin| &origin["Id"] == target)
        .collect();
    assert_eq!(found.len(), 1, "{path}: one origin named {target:?}");
    found[0]
}

/// The managed policy a `CachePolicyId` or `OriginRequestPolicyId` names (through the
/// template's `CloudFrontManagedPolicy` mapping), checked against its documented id; `None` for
/// a policy of the template (`!Ref`) or none.
fn managed_policy(template: &Template, id: &Value) -> Option<&'static str> {
    let (name, argument) = intrinsic(id)?;
    if name != "FindInMap" {
        return None;
    }
    let keys: Vec<&str> = sequence(argument)
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(keys.len(), 3, "FindInMap of literal keys: {argument:?}");
    let value = scalar_text(&template.root["Mappings"][keys[0]][keys[1]][keys[2]])
        .unwrap_or_else(|| panic!("no mapping {keys:?}"));
    let (policy, documented) = MANAGED_POLICIES
        .iter()
        .find(|(policy, _)| *policy == keys[1])
        .unwrap_or_else(|| panic!("{} is not a managed policy checked here", keys[1]));
    assert_eq!(value, *documented, "the managed policy {policy}'s id");
    Some(policy)
}

/// The template resource a `!Ref` policy id names: its properties.
fn policy_resource<'a>(template: &'a Template, id: &Value, kind: &str) -> &'a Value {
    let target = ref_target(id).unwrap_or_else(|| panic!("not a !Ref: {id:?}"));
    assert_eq!(template.resource_type(target), Some(kind), "{target}");
    &template.root["Resources"][target]["Properties"]
}

/// The viewer headers an origin request carries.
enum Forwarded {
    /// Every one but Host (AllViewerExceptHostHeader).
    AllButHost,
    /// These (lower-case).
    Only(BTreeSet<String>),
}

impl Forwarded {
    fn includes(&self, header: &str) -> bool {
        match self {
            Self::AllButHost => !header.eq_ignore_ascii_case("host"),
            Self::Only(headers) => headers.contains(&header.to_ascii_lowercase()),
        }
    }
}

/// What a behavior's origin request policy forwards of the viewer's headers (besides the cache
/// key's).
fn forwarded_headers(template: &Template, id: &Value) -> Forwarded {
    if id.is_null() {
        return Forwarded::Only(BTreeSet::new());
    }
    if let Some(policy) = managed_policy(template, id) {
        assert_eq!(
            policy, "AllViewerExceptHostHeader",
            "an origin request policy"
        );
        return Forwarded::AllButHost;
    }
    let config = &policy_resource(template, id, "AWS::CloudFront::OriginRequestPolicy")["OriginRequestPolicyConfig"];
    match config["HeadersConfig"]["HeaderBehavior"].as_str() {
        Some("none") => Forwarded::Only(BTreeSet::new()),
        Some("whitelist") => Forwarded::Only(
            sequence(&config["HeadersConfig"]["Headers"])
                .iter()
                .map(|h| h.as_str().unwrap().to_ascii_lowercase())
                .collect(),
        ),
        other => panic!("origin request policy header behavior {other:?}"),
    }
}

fn strings(value: &Value) -> BTreeSet<String> {
    sequence(value).iter().filter_map(scalar_text).collect()
}

#[test]
fn the_page_is_served_from_its_bucket_through_an_origin_access_control() {
    let template = Template::load();
    assert_eq!(template.defaults["UiDistribution"], "true");
    let deployed = template.deployed(&ui_stack(&template, true));
    let (distribution, config) = deployed_distribution(&deployed);

    // The default behavior (the page's paths) reads the page's bucket, signed by an origin
    // access control (no legacy origin access identity).
    let origin = origin_of(config, "default");
    let (bucket, attribute) = get_att(&origin["DomainName"]).expect("the origin is a bucket");
    assert_eq!(attribute, "RegionalDomainName");
    assert_eq!(template.resource_type(&bucket), Some("AWS::S3::Bucket"));
    assert_eq!(
        origin["S3OriginConfig"]["OriginAccessIdentity"].as_str(),
        Some(""),
        "no origin access identity"
    );
    let (control, attribute) = get_att(&origin["OriginAccessControlId"]).unwrap();
    assert_eq!(attribute, "Id");
    assert_eq!(
        template.resource_type(&control),
        Some("AWS::CloudFront::OriginAccessControl")
    );
    let control = &deployed[control.as_str()]["Properties"]["OriginAccessControlConfig"];
    for (setting, value) in [
        ("OriginAccessControlOriginType", "s3"),
        ("SigningBehavior", "always"),
        ("SigningProtocol", "sigv4"),
    ] {
        assert_eq!(control[setting].as_str(), Some(value), "{setting}");
    }

    // The bucket is private and encrypted.
    let properties = &deployed[bucket.as_str()]["Properties"];
    for setting in [
        "BlockPublicAcls",
        "BlockPublicPolicy",
        "IgnorePublicAcls",
        "RestrictPublicBuckets",
    ] {
        assert_eq!(
            properties["PublicAccessBlockConfiguration"][setting].as_bool(),
            Some(true),
            "{bucket}: {setting}"
        );
    }
    assert_eq!(
        sequence(&properties["BucketEncryption"]["ServerSideEncryptionConfiguration"])[0]
            ["ServerSideEncryptionByDefault"]["SSEAlgorithm"]
            .as_str(),
        Some("AES256"),
        "{bucket}: SSE-S3"
    );

    // Its policy lets only this distribution read its objects, and nobody else anything.
    let policies: Vec<(&str, &Value)> = deployed_of(&deployed, "AWS::S3::BucketPolicy")
        .into_iter()
        .filter(|(_, policy)| ref_target(&policy["Bucket"]) == Some(bucket.as_str()))
        .collect();
    assert_eq!(policies.len(), 1, "{bucket} has a bucket policy");
    let allowed: Vec<&Value> = sequence(&policies[0].1["PolicyDocument"]["Statement"])
        .iter()
        .filter(|statement| statement["Effect"].as_str() == Some("Allow"))
        .collect();
    assert_eq!(allowed.len(), 1, "one Allow: {allowed:?}");
    let statement = allowed[0];
    assert_eq!(
        statement["Principal"]["Service"].as_str(),
        Some("cloudfront.amazonaws.com"),
        "CloudFront as the service (origin access control)"
    );
    assert_eq!(
        statement["Action"].as_str(),
        Some("s3:GetObject"),
        "read only"
    );
    assert_eq!(
        intrinsic(&statement["Resource"]).and_then(|(_, pattern)| pattern.as_str()),
        Some(format!("${{{bucket}.Arn}}/*").as_str()),
        "the bucket's objects"
    );
    let source = &statement["Condition"]["StringEquals"]["AWS:SourceArn"];
    assert_eq!(
        intrinsic(source).and_then(|(_, pattern)| pattern.as_str()),
        Some(
            format!(
                "arn:${{AWS::Partition}}:cloudfront::${{AWS::AccountId}}:distribution/${{{distribution}}}"
            )
            .as_str()
        ),
        "only for requests of this distribution"
    );

    // The page's files are short-lived at the edge: the managed policy honours the files'
    // Cache-Control, which publish-ui.sh sets to a minute.
    let page = behavior(config, "default");
    assert_eq!(
        managed_policy(&template, &page["CachePolicyId"]),
        Some("CachingOptimized")
    );
    assert!(
        read(PUBLISH_UI).contains("CACHE_CONTROL=\"public, max-age=60\""),
        "{PUBLISH_UI} uploads the files with Cache-Control: public, max-age=60"
    );
}

#[test]
fn the_api_paths_go_to_the_load_balancer_and_only_the_seat_map_is_cached() {
    let template = Template::load();
    let (balancer, _) = template.only("AWS::ElasticLoadBalancingV2::LoadBalancer");
    for certificate in [true, false] {
        let deployed = template.deployed(&ui_stack(&template, certificate));
        let (_, config) = deployed_distribution(&deployed);
        let api = origin_of(config, "/v1/*");
        for path in ["/ui/config.json", "/v1/events/*/seats"] {
            assert_eq!(
                origin_of(config, path)["Id"],
                api["Id"],
                "{path} goes to the API"
            );
        }

        // The load balancer, by a name its certificate covers, over its forwarding listener.
        let custom = &api["CustomOriginConfig"];
        let listener_port = if certificate { 443 } else { 80 };
        if certificate {
            assert_eq!(ref_target(&api["DomainName"]), Some("ApiDomainName"));
            assert_eq!(custom["OriginProtocolPolicy"].as_str(), Some("https-only"));
            assert_eq!(custom["HTTPSPort"].as_u64(), Some(listener_port));
        } else {
            assert_eq!(
                get_att(&api["DomainName"]),
                Some((balancer.clone(), "DNSName".to_owned()))
            );
            assert_eq!(custom["OriginProtocolPolicy"].as_str(), Some("http-only"));
            assert_eq!(custom["HTTPPort"].as_u64(), Some(listener_port));
        }
        assert!(
            custom["OriginReadTimeout"].as_u64().is_some_and(|s| s > 20),
            "a job's long poll (up to 20 s) outlasts no origin timeout"
        );

        let all_methods: BTreeSet<String> = ALL_METHODS.map(str::to_owned).into();
        assert_eq!(
            strings(&behavior(config, "/v1/*")["AllowedMethods"]),
            all_methods,
            "/v1/* passes every method"
        );

        // Nothing of the API is cached but the seat map, and the API gets every viewer header
        // but Host (Authorization, Idempotency-Key, ...). CloudFront forwards Authorization
        // through an origin request policy only when caching is disabled.
        let ordered = behaviors(config);
        let position = |path: &str| ordered.iter().position(|(p, _)| p == path).unwrap();
        assert!(
            position("/v1/events/*/seats") < position("/v1/*"),
            "the seat map's behavior comes before /v1/* (the first match wins)"
        );
        for (path, behavior) in &ordered {
            let cache = managed_policy(&template, &behavior["CachePolicyId"]);
            if path == "/v1/events/*/seats" {
                assert_ne!(cache, Some("CachingDisabled"), "the seat map is cached");
            } else if path.starts_with("/v1/") || path == "/ui/config.json" {
                assert_eq!(cache, Some("CachingDisabled"), "{path} is not cached");
                assert_eq!(
                    managed_policy(&template, &behavior["OriginRequestPolicyId"]),
                    Some("AllViewerExceptHostHeader"),
                    "{path}: every viewer header but Host"
                );
            } else {
                assert_ne!(behavior["TargetOriginId"], api["Id"], "{path}");
            }
        }
    }
}

#[test]
fn the_seat_map_is_cached_as_the_api_says_and_keyed_on_its_section() {
    let template = Template::load();
    let deployed = template.deployed(&ui_stack(&template, true));
    let (_, config) = deployed_distribution(&deployed);
    let seats = behavior(config, "/v1/events/*/seats");
    assert_eq!(
        strings(&seats["AllowedMethods"]),
        BTreeSet::from(["GET", "HEAD"].map(str::to_owned)),
        "the seat map is read only"
    );

    let policy = &policy_resource(
        &template,
        &seats["CachePolicyId"],
        "AWS::CloudFront::CachePolicy",
    )["CachePolicyConfig"];
    // Honours the API's Cache-Control (public, max-age=1): no floor, nothing kept without it.
    assert_eq!(policy["MinTTL"].as_u64(), Some(0), "no floor under max-age");
    assert_eq!(
        policy["DefaultTTL"].as_u64(),
        Some(0),
        "nothing kept without Cache-Control"
    );
    assert!(
        policy["MaxTTL"].as_u64().is_some_and(|ttl| ttl >= 1),
        "max-age=1 is honoured"
    );
    let key = &policy["ParametersInCacheKeyAndForwardedToOrigin"];
    assert_eq!(
        key["QueryStringsConfig"]["QueryStringBehavior"].as_str(),
        Some("whitelist")
    );
    assert_eq!(
        strings(&key["QueryStringsConfig"]["QueryStrings"]),
        BTreeSet::from(["section".to_owned()]),
        "one copy per ?section= (and one of the whole map)"
    );
    // No header in the key: not Host (the load balancer's certificate covers the API's name,
    // not the distribution's), not Authorization (the map is public).
    assert_eq!(
        key["HeadersConfig"]["HeaderBehavior"].as_str(),
        Some("none")
    );
    // CloudFront answers conditional requests (If-None-Match) only without cookies.
    assert_eq!(
        key["CookiesConfig"]["CookieBehavior"].as_str(),
        Some("none")
    );
    for encoding in ["EnableAcceptEncodingGzip", "EnableAcceptEncodingBrotli"] {
        assert_eq!(
            key[encoding].as_bool(),
            Some(true),
            "{encoding}: a compressed copy per encoding"
        );
    }
    assert!(
        !forwarded_headers(&template, &seats["OriginRequestPolicyId"]).includes("Host"),
        "the seat map's origin requests keep the origin's Host"
    );
}

#[test]
fn viewers_of_the_page_are_redirected_to_https() {
    let template = Template::load();
    let alias = "tickets.example.com";
    let certificate = "arn:aws:acm:us-east-1:111122223333:certificate/ef01";
    for named in [false, true] {
        let mut parameters = ui_stack(&template, true);
        if named {
            parameters.insert("UiDomainName".to_owned(), alias.to_owned());
            parameters.insert("UiCertificateArn".to_owned(), certificate.to_owned());
            assert!(template.refusals(&parameters).is_empty());
        }
        let deployed = template.deployed(&parameters);
        let (_, config) = deployed_distribution(&deployed);
        for (path, behavior) in behaviors(config) {
            assert_eq!(
                behavior["ViewerProtocolPolicy"].as_str(),
                Some("redirect-to-https"),
                "{path}"
            );
        }
        let viewer = &config["ViewerCertificate"];
        if named {
            assert_eq!(
                sequence(&config["Aliases"])
                    .iter()
                    .map(|a| ref_target(a))
                    .collect::<Vec<_>>(),
                [Some("UiDomainName")]
            );
            assert_eq!(
                ref_target(&viewer["AcmCertificateArn"]),
                Some("UiCertificateArn")
            );
            assert_eq!(viewer["SslSupportMethod"].as_str(), Some("sni-only"));
            assert!(
                viewer["MinimumProtocolVersion"]
                    .as_str()
                    .is_some_and(|version| version.starts_with("TLSv1.2")),
                "TLS 1.2 at least"
            );
        } else {
            assert!(config.get("Aliases").is_none(), "no alternate name");
            assert_eq!(viewer["CloudFrontDefaultCertificate"].as_bool(), Some(true));
        }
        let url = template
            .resolve(&template.root["Outputs"]["UiUrl"]["Value"], &parameters)
            .unwrap();
        let (_, pattern) = intrinsic(&url).unwrap();
        assert!(
            pattern
                .as_str()
                .is_some_and(|url| url.starts_with("https://")
                    && url.ends_with('/')
                    && url.contains(if named {
                        "${UiDomainName}"
                    } else {
                        ".DomainName}"
                    })),
            "UiUrl is the page's root, the sign-in callback: {url:?}"
        );
    }
    // CloudFront takes certificates from us-east-1 only.
    let pattern = template.root["Parameters"]["UiCertificateArn"]["AllowedPattern"]
        .as_str()
        .unwrap();
    assert!(pattern.contains(":acm:us-east-1:"), "{pattern}");
}

#[test]
fn the_page_function_answers_every_page_path_with_index_html() {
    let template = Template::load();
    let deployed = template.deployed(&ui_stack(&template, true));
    let (_, config) = deployed_distribution(&deployed);
    let associations: Vec<&Value> = sequence(&behavior(config, "default")["FunctionAssociations"])
        .iter()
        .collect();
    assert_eq!(associations.len(), 1, "one function on the page's paths");
    assert_eq!(
        associations[0]["EventType"].as_str(),
        Some("viewer-request"),
        "it changes the request before the cache is looked up"
    );
    let (function, attribute) = get_att(&associations[0]["FunctionARN"]).unwrap();
    assert_eq!(attribute, "FunctionARN");
    assert_eq!(
        template.resource_type(&function),
        Some("AWS::CloudFront::Function")
    );
    let properties = &deployed[function.as_str()]["Properties"];
    assert_eq!(
        properties["FunctionConfig"]["Runtime"].as_str(),
        Some("cloudfront-js-2.0")
    );
    assert_eq!(
        properties["AutoPublish"].as_bool(),
        Some(true),
        "published to LIVE, which a distribution can use"
    );
    let code = properties["FunctionCode"].as_str().unwrap();
    assert!(
        code.contains("function handler(event)") && code.contains("return request"),
        "a viewer-request handler: {code}"
    );
    assert!(
        code.contains("request.uri = '/index.html'"),
        "page paths become the page: {code}"
    );
    assert!(
        code.contains("'/ui/'"),
        "the files under /ui/ stay themselves: {code}"
    );
    // The page links its files under /ui/ (and nothing else the function would rewrite).
    let page = read(&format!("{UI_DIR}/index.html"));
    for file in ui_files().into_iter().filter(|f| f != "index.html") {
        assert!(
            page.contains(&format!("\"/ui/{file}\"")),
            "index.html loads /ui/{file}"
        );
    }
}

#[test]
fn without_ui_distribution_the_stack_has_no_page_bucket_or_distribution() {
    let template = Template::load();
    assert_eq!(
        strings(&template.root["Parameters"]["UiDistribution"]["AllowedValues"]),
        BTreeSet::from(["true", "false"].map(str::to_owned))
    );
    let with = template.deployed(&ui_stack(&template, true));
    let parameters =
        template.parameters(&[("UiDistribution", "false"), ("CertificateArn", CERTIFICATE)]);
    assert!(
        template.refusals(&parameters).is_empty(),
        "no ApiDomainName needed without the distribution"
    );
    let without = template.deployed(&parameters);
    let cloudfront = |deployed: &BTreeMap<String, Value>| -> BTreeSet<String> {
        deployed
            .iter()
            .filter(|(_, r)| {
                r["Type"]
                    .as_str()
                    .is_some_and(|t| t.starts_with("AWS::CloudFront::"))
            })
            .map(|(id, _)| id.clone())
            .collect()
    };
    assert!(
        cloudfront(&with).len() >= 4,
        "a distribution, its origin access control, functions and policies: {:?}",
        cloudfront(&with)
    );
    assert!(
        cloudfront(&without).is_empty(),
        "no CloudFront resource: {:?}",
        cloudfront(&without)
    );
    let (_, config) = deployed_distribution(&with);
    let (bucket, _) = get_att(&origin_of(config, "default")["DomainName"]).unwrap();
    let gone: Vec<&String> = with
        .keys()
        .filter(|id| !without.contains_key(*id))
        .collect();
    assert!(
        !without.contains_key(&bucket),
        "no page bucket without the distribution"
    );
    for id in &gone {
        assert_eq!(
            template.root["Resources"][id.as_str()]["Condition"].as_str(),
            Some("CreateUiDistribution"),
            "{id}"
        );
    }
    assert!(
        without.keys().all(|id| with.contains_key(id)),
        "nothing replaces them"
    );
    // Nothing left refers to what is gone, and no output names it.
    for (id, resource) in &without {
        let text = format!("{resource:?}");
        for gone in &gone {
            assert!(
                !text.contains(&format!("\"{gone}\"")) && !text.contains(&format!("{{{gone}")),
                "{id} refers to {gone}"
            );
        }
    }
    for (name, output) in template.root["Outputs"].as_mapping().unwrap() {
        let text = format!("{output:?}");
        if gone.iter().any(|gone| text.contains(gone.as_str())) {
            assert_eq!(
                output["Condition"].as_str(),
                Some("CreateUiDistribution"),
                "output {name:?}"
            );
        }
    }
}

/// The files of the page's directory.
fn ui_files() -> BTreeSet<String> {
    std::fs::read_dir(repo_file(UI_DIR))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect()
}

#[test]
fn publish_ui_uploads_every_file_of_the_page() {
    let script = read(PUBLISH_UI);
    let list = script
        .split_once("FILES=(\n")
        .and_then(|(_, rest)| rest.split_once("\n)"))
        .map(|(list, _)| list)
        .expect("publish-ui.sh lists the files in FILES=( ... )");
    let entries: Vec<(String, String, String)> = list
        .lines()
        .map(|line| {
            let entry = line.trim().trim_matches('"');
            let parts: Vec<&str> = entry.split('|').collect();
            assert_eq!(parts.len(), 3, "name|key|Content-Type: {line}");
            (parts[0].into(), parts[1].into(), parts[2].into())
        })
        .collect();
    let listed: BTreeSet<String> = entries.iter().map(|(name, _, _)| name.clone()).collect();
    assert_eq!(listed.len(), entries.len(), "each file once");
    assert_eq!(
        listed,
        ui_files(),
        "{PUBLISH_UI} publishes exactly the files of {UI_DIR}"
    );
    for (name, key, content_type) in &entries {
        // The distribution serves index.html for the page's paths and the other files under
        // /ui/, where the page asks for them.
        let expected_key = if name == "index.html" {
            name.clone()
        } else {
            format!("ui/{name}")
        };
        assert_eq!(key, &expected_key, "{name}'s key in the bucket");
        let expected_type = match name.rsplit_once('.').map(|(_, extension)| extension) {
            Some("html") => "text/html",
            Some("js") => "text/javascript",
            Some("css") => "text/css",
            other => panic!("{name}: no Content-Type known for {other:?}"),
        };
        assert!(
            content_type.starts_with(expected_type) && content_type.contains("charset=utf-8"),
            "{name}: {content_type}"
        );
    }
    assert_eq!(
        entries.last().map(|(name, _, _)| name.as_str()),
        Some("index.html"),
        "the page last, after the files it loads"
    );
    assert!(script.contains("--paths '/*'"), "it invalidates everything");
    assert!(script.contains("set -euo pipefail"));

    // The outputs it reads name the distribution's bucket and the distribution.
    let template = Template::load();
    let deployed = template.deployed(&ui_stack(&template, true));
    let (distribution, config) = deployed_distribution(&deployed);
    let (bucket, _) = get_att(&origin_of(config, "default")["DomainName"]).unwrap();
    for (output, target) in [
        ("UiBucketName", bucket.as_str()),
        ("UiDistributionId", distribution),
    ] {
        assert!(
            script.contains(&format!("output {output}")),
            "{PUBLISH_UI} reads the output {output}"
        );
        let declared = &template.root["Outputs"][output];
        assert_eq!(ref_target(&declared["Value"]), Some(target), "{output}");
        assert_eq!(declared["Condition"].as_str(), Some("CreateUiDistribution"));
    }
}

/// Every answer of the distribution, the page's from the bucket and the API's alike, carries HSTS
/// and the browser-facing security headers; the page gets a Content-Security-Policy, the API's
/// own is kept.
#[test]
fn every_answer_of_the_distribution_carries_hsts_and_the_security_headers() {
    let template = Template::load();
    let parameters = template.parameters(&[
        ("CertificateArn", CERTIFICATE),
        ("ApiDomainName", API_DOMAIN),
    ]);
    let deployed = template.deployed(&parameters);
    let (_, config) = deployed_distribution(&deployed);
    for (pattern, behavior) in behaviors(config) {
        let policy = ref_target(&behavior["ResponseHeadersPolicyId"])
            .unwrap_or_else(|| panic!("{pattern}: no response headers policy"));
        let headers =
            &deployed[policy]["Properties"]["ResponseHeadersPolicyConfig"]["SecurityHeadersConfig"];
        let hsts = &headers["StrictTransportSecurity"];
        assert!(
            hsts["AccessControlMaxAgeSec"]
                .as_u64()
                .is_some_and(|age| age >= 31_536_000),
            "{pattern}: HSTS for a year at least: {hsts:?}"
        );
        assert_eq!(hsts["IncludeSubdomains"].as_bool(), Some(true));
        assert_eq!(
            headers["ContentTypeOptions"]["Override"].as_bool(),
            Some(true)
        );
        assert_eq!(
            headers["ReferrerPolicy"]["ReferrerPolicy"].as_str(),
            Some("no-referrer")
        );
        let csp = &headers["ContentSecurityPolicy"];
        assert_eq!(
            csp["Override"].as_bool(),
            Some(false),
            "the API's own is kept"
        );
        let text = format!("{:?}", csp["ContentSecurityPolicy"]);
        assert!(
            text.contains("default-src 'self'") && text.contains("frame-ancestors 'none'"),
            "{pattern}: {text}"
        );
    }
}

#[test]
fn the_distribution_reaches_the_api_by_its_name_and_serves_its_own_with_a_certificate() {
    let template = Template::load();
    let refused = |overrides: &[(&str, &str)]| template.refusals(&template.parameters(overrides));
    // HTTPS to the load balancer needs a name its certificate covers.
    let refusals = refused(&[("CertificateArn", CERTIFICATE)]);
    assert!(
        refusals.iter().any(|why| why.contains("ApiDomainName")),
        "a distribution without the API's name: {refusals:?}"
    );
    assert!(
        refused(&[
            ("CertificateArn", CERTIFICATE),
            ("ApiDomainName", API_DOMAIN)
        ])
        .is_empty()
    );
    assert!(refused(&[("CertificateArn", CERTIFICATE), ("UiDistribution", "false")]).is_empty());
    assert!(
        refused(&[("AllowPlainHttp", "true")]).is_empty(),
        "plain HTTP by the load balancer's name"
    );

    // An alternate name and its certificate go together.
    let base = [
        ("CertificateArn", CERTIFICATE),
        ("ApiDomainName", API_DOMAIN),
    ];
    let with = |extra: &[(&'static str, &'static str)]| {
        let mut all = base.to_vec();
        all.extend_from_slice(extra);
        refused(&all)
    };
    let certificate = "arn:aws:acm:us-east-1:111122223333:certificate/ef01";
    for refusals in [
        with(&[("UiDomainName", "tickets.example.com")]),
        with(&[("UiCertificateArn", certificate)]),
    ] {
        assert!(
            refusals
                .iter()
                .any(|why| why.contains("UiDomainName") && why.contains("UiCertificateArn")),
            "{refusals:?}"
        );
    }
    assert!(
        with(&[
            ("UiDomainName", "tickets.example.com"),
            ("UiCertificateArn", certificate)
        ])
        .is_empty()
    );
}

// ------------------------------------------------------------------ the seat map's CloudFront WAF

/// A CLOUDFRONT web ACL of someone else's (page-waf.yaml's, deployed in us-east-1).
const PAGE_WEB_ACL: &str =
    "arn:aws:wafv2:us-east-1:111122223333:global/webacl/seatclaim-eu-west-1-page/0a1b2c3d-4e5f";

/// Whether WAF's scope-down `statement` matches a request for `path` (the statements the web ACLs
/// use: byte matches on the URI path without transformation, and their conjunctions).
fn matches_path(statement: &Value, path: &str) -> bool {
    if let Some(and) = statement.get("AndStatement") {
        return sequence(&and["Statements"])
            .iter()
            .all(|s| matches_path(s, path));
    }
    if let Some(or) = statement.get("OrStatement") {
        return sequence(&or["Statements"])
            .iter()
            .any(|s| matches_path(s, path));
    }
    if let Some(not) = statement.get("NotStatement") {
        return !matches_path(&not["Statement"], path);
    }
    let byte_match = statement
        .get("ByteMatchStatement")
        .unwrap_or_else(|| panic!("not evaluated here: {statement:?}"));
    assert!(
        byte_match["FieldToMatch"].get("UriPath").is_some(),
        "a match on the path: {byte_match:?}"
    );
    let transformations: Vec<Option<&str>> = sequence(&byte_match["TextTransformations"])
        .iter()
        .map(|t| t["Type"].as_str())
        .collect();
    assert_eq!(transformations, [Some("NONE")], "{byte_match:?}");
    let wanted = byte_match["SearchString"].as_str().unwrap();
    match byte_match["PositionalConstraint"].as_str().unwrap() {
        "EXACTLY" => path == wanted,
        "STARTS_WITH" => path.starts_with(wanted),
        "ENDS_WITH" => path.ends_with(wanted),
        "CONTAINS" => path.contains(wanted),
        other => panic!("PositionalConstraint {other}"),
    }
}

/// The seat map's cache hits never reach the load balancer (nor its REGIONAL web ACL), so the
/// distribution has a CLOUDFRONT web ACL of its own: the stack creates it where such web ACLs
/// are created (us-east-1) unless it is given one, and uses the one given otherwise.
#[test]
fn the_page_distribution_uses_the_stacks_cloudfront_web_acl_in_us_east_1_or_the_given_one() {
    let template = Template::load();
    let acl_id = web_acl_of_scope(&template, "CLOUDFRONT");
    assert_eq!(
        template.defaults["PageWebAclArn"], "",
        "none given unless told"
    );
    let pattern = template.root["Parameters"]["PageWebAclArn"]["AllowedPattern"]
        .as_str()
        .unwrap();
    assert!(
        pattern.contains(":wafv2:us-east-1:") && pattern.contains(":global/webacl/"),
        "only a CLOUDFRONT web ACL (in us-east-1) may be given: {pattern}"
    );

    for region in ["us-east-1", REGION] {
        for distribution in [true, false] {
            for given in ["", PAGE_WEB_ACL] {
                let parameters = template.parameters(&[
                    ("AWS::Region", region),
                    (
                        "UiDistribution",
                        if distribution { "true" } else { "false" },
                    ),
                    ("CertificateArn", CERTIFICATE),
                    ("ApiDomainName", API_DOMAIN),
                    ("PageWebAclArn", given),
                ]);
                assert!(template.refusals(&parameters).is_empty());
                let case = format!("{region}, UiDistribution {distribution}, given {given:?}");
                let deployed = template.deployed(&parameters);
                let created = deployed.contains_key(&acl_id);
                assert_eq!(
                    created,
                    distribution && region == "us-east-1" && given.is_empty(),
                    "{case}: {acl_id} created"
                );
                assert_eq!(template.condition("CreatePageWebAcl", &parameters), created);
                // The load balancer's web ACL is there in every case.
                assert_eq!(
                    deployed_of(&deployed, "AWS::WAFv2::WebACL")
                        .into_iter()
                        .filter(|(_, acl)| acl["Scope"].as_str() == Some("REGIONAL"))
                        .count(),
                    1,
                    "{case}"
                );
                if !distribution {
                    assert!(
                        deployed_of(&deployed, "AWS::CloudFront::Distribution").is_empty(),
                        "{case}"
                    );
                    continue;
                }
                let (_, config) = deployed_distribution(&deployed);
                let web_acl = &config["WebACLId"];
                if created {
                    assert_eq!(
                        get_att(web_acl),
                        Some((acl_id.clone(), "Arn".to_owned())),
                        "{case}: the stack's own (a WAFv2 web ACL is named by its ARN)"
                    );
                    assert_eq!(
                        deployed[&acl_id]["Properties"]["Scope"].as_str(),
                        Some("CLOUDFRONT"),
                        "{case}"
                    );
                } else if given.is_empty() {
                    assert!(
                        config.get("WebACLId").is_none(),
                        "{case}: no web ACL to use: {web_acl:?}"
                    );
                } else {
                    assert_eq!(
                        ref_target(web_acl),
                        Some("PageWebAclArn"),
                        "{case}: the one given"
                    );
                }
            }
        }
    }
    let output = &template.root["Outputs"]["CreatedPageWebAclArn"];
    assert_eq!(output["Condition"].as_str(), Some("CreatePageWebAcl"));
    assert_eq!(get_att(&output["Value"]), Some((acl_id, "Arn".to_owned())));
}

/// The CloudFront web ACL's one rule counts each viewer's seat map requests (hits and misses) and
/// nothing else of the distribution: the paths of the seat map's cache behavior.
#[test]
fn the_cloudfront_web_acl_counts_each_viewers_seat_map_requests() {
    let template = Template::load();
    let acl_id = web_acl_of_scope(&template, "CLOUDFRONT");
    let parameters = template.parameters(&[
        ("AWS::Region", "us-east-1"),
        ("CertificateArn", CERTIFICATE),
        ("ApiDomainName", API_DOMAIN),
    ]);
    let deployed = template.deployed(&parameters);
    let acl = &deployed[&acl_id]["Properties"];
    assert!(acl["DefaultAction"].get("Allow").is_some(), "others pass");
    let rules = sequence(&acl["Rules"]);
    assert_eq!(rules.len(), 1, "one rule: {rules:?}");
    let rule = &rules[0];
    let statement = &rule["Statement"]["RateBasedStatement"];
    assert_eq!(
        statement["AggregateKeyType"].as_str(),
        Some("IP"),
        "per address: at the edge, the viewer's own"
    );
    assert_eq!(
        ref_target(&statement["Limit"]),
        Some("WafSeatMapRequestsPerFiveMinutesPerIp")
    );
    assert_eq!(statement["EvaluationWindowSec"].as_u64(), Some(300));
    assert_eq!(
        rule["Action"]["Block"]["CustomResponse"]["ResponseCode"].as_u64(),
        Some(429),
        "a limited viewer is told to slow down"
    );

    // Scoped down to the seat map's behavior: /v1/events/<id>/seats, whatever the id.
    let (_, config) = deployed_distribution(&deployed);
    let seat_map = "/v1/events/*/seats";
    assert!(
        ref_target(&behavior(config, seat_map)["CachePolicyId"]).is_some(),
        "the distribution caches the seat map with a policy of its own"
    );
    let (start, end) = seat_map.split_once('*').unwrap();
    let scope = &statement["ScopeDownStatement"];
    let byte_matches: BTreeSet<(String, String)> = sequence(&scope["AndStatement"]["Statements"])
        .iter()
        .map(|s| &s["ByteMatchStatement"])
        .map(|m| {
            (
                m["PositionalConstraint"].as_str().unwrap().to_owned(),
                m["SearchString"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        byte_matches,
        BTreeSet::from([
            ("STARTS_WITH".to_owned(), start.to_owned()),
            ("ENDS_WITH".to_owned(), end.to_owned())
        ]),
        "the path starts and ends as the behavior's pattern: {scope:?}"
    );
    for (path, counted) in [
        ("/v1/events/launch-1/seats", true),
        ("/v1/events/e/seats", true),
        ("/v1/events", false),
        ("/v1/events/launch-1", false),
        ("/v1/events/launch-1/reservations", false),
        ("/v1/jobs/5f0c/confirm", false),
        ("/v1/payments/stripe", false),
        ("/events/launch-1", false),
        ("/ui/app.js", false),
        ("/", false),
    ] {
        assert_eq!(matches_path(scope, path), counted, "{path}");
    }

    let parameter = &template.root["Parameters"]["WafSeatMapRequestsPerFiveMinutesPerIp"];
    let minimum = parameter["MinValue"].as_u64().unwrap();
    let default: u64 = template.defaults["WafSeatMapRequestsPerFiveMinutesPerIp"]
        .parse()
        .unwrap();
    assert!(minimum >= 10, "WAF's smallest limit is 10");
    assert!(default >= minimum);
}

/// A stack outside us-east-1 gets the same web ACL from page-waf.yaml, deployed in us-east-1:
/// the same rule, word for word, under the same name, and an output to pass as PageWebAclArn.
#[test]
fn page_waf_yaml_creates_the_same_cloudfront_web_acl_for_other_regions() {
    let stack = Template::load();
    let page = Template::load_from(PAGE_WAF);
    let stack_acl_id = web_acl_of_scope(&stack, "CLOUDFRONT");
    let (page_acl_id, page_acl) = page.only("AWS::WAFv2::WebACL");
    let stack_acl = &stack.root["Resources"][stack_acl_id.as_str()]["Properties"];
    assert!(
        page.root["Resources"][page_acl_id.as_str()]["Condition"].is_null(),
        "page-waf.yaml always creates it"
    );
    for property in [
        "Scope",
        "DefaultAction",
        "Rules",
        "Description",
        "VisibilityConfig",
    ] {
        assert_eq!(
            page_acl[property], stack_acl[property],
            "{PAGE_WAF}: {property} differs from {TEMPLATE}'s {stack_acl_id}"
        );
    }
    let name = |acl: &Value| {
        intrinsic(&acl["Name"])
            .and_then(|(_, pattern)| pattern.as_str().map(str::to_owned))
            .unwrap()
    };
    assert_eq!(
        name(page_acl).replace("${StackRegion}", "${AWS::Region}"),
        name(stack_acl),
        "named after the stack's Region, as the stack names its own"
    );

    // The parameters the rule and the name use are the same.
    for parameter in ["WafSeatMapRequestsPerFiveMinutesPerIp", "Prefix"] {
        for field in ["Type", "Default", "MinValue", "MaxValue", "AllowedPattern"] {
            assert_eq!(
                page.root["Parameters"][parameter][field],
                stack.root["Parameters"][parameter][field],
                "{parameter}: {field}"
            );
        }
    }
    assert!(page.root["Parameters"]["StackRegion"].is_mapping());

    // Its output is what the stack takes.
    let output = &page.root["Outputs"]["PageWebAclArn"]["Value"];
    assert_eq!(get_att(output), Some((page_acl_id, "Arn".to_owned())));
    assert!(stack.root["Parameters"]["PageWebAclArn"].is_mapping());

    // deploy/check.sh lints every template of the folder, this one too.
    let check = read("deploy/check.sh");
    assert!(
        check.contains("templates=(deploy/cloudformation/*.yaml)"),
        "deploy/check.sh lints every template under deploy/cloudformation/"
    );
}

// ------------------------------------------------------------------------------------- identity

#[test]
fn without_an_issuer_the_stack_creates_the_cognito_pool_the_api_trusts() {
    let template = Template::load();
    assert_eq!(
        template.defaults["AuthJwksUrl"], "",
        "a pool unless told otherwise"
    );
    let existing =
        "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbCdEf/.well-known/jwks.json";
    assert!(template.condition("CreateUserPool", &template.parameters(&[])));
    assert!(!template.condition(
        "CreateUserPool",
        &template.parameters(&[("AuthJwksUrl", existing)])
    ));

    let cognito: Vec<(String, &Value)> = template.root["Resources"]
        .as_mapping()
        .unwrap()
        .iter()
        .filter(|(_, r)| {
            r["Type"]
                .as_str()
                .is_some_and(|t| t.starts_with("AWS::Cognito::"))
        })
        .map(|(id, r)| (id.as_str().unwrap().to_owned(), r))
        .collect();
    assert!(!cognito.is_empty(), "the template has a Cognito user pool");
    for (id, resource) in &cognito {
        assert_eq!(
            resource["Condition"].as_str(),
            Some("CreateUserPool"),
            "{id} exists only when the stack creates the pool"
        );
    }
    let (pool, _) = template.only("AWS::Cognito::UserPool");
    template.only("AWS::Cognito::UserPoolDomain");

    // The admin scope is the API's default; the payments scope is the other one.
    let (server_id, server) = template.only("AWS::Cognito::UserPoolResourceServer");
    let identifier = server["Identifier"].as_str().unwrap();
    let scopes: BTreeSet<String> = sequence(&server["Scopes"])
        .iter()
        .filter_map(|scope| scope["ScopeName"].as_str())
        .map(|scope| format!("{identifier}/{scope}"))
        .collect();
    assert_eq!(
        scopes,
        BTreeSet::from([DEFAULT_ADMIN_SCOPE, PAYMENTS_SCOPE].map(str::to_owned)),
        "the scope the API requires of admins, and the payments scope"
    );

    let clients = template.resources("AWS::Cognito::UserPoolClient");
    let flows = |client: &Value| -> Vec<String> {
        sequence(&client["AllowedOAuthFlows"])
            .iter()
            .filter_map(scalar_text)
            .collect()
    };
    for (id, client) in &clients {
        assert_eq!(
            ref_target(&client["UserPoolId"]),
            Some(pool.as_str()),
            "{id}"
        );
        assert_eq!(
            client["AllowedOAuthFlowsUserPoolClient"].as_bool(),
            Some(true),
            "{id}"
        );
    }
    let public: Vec<&(String, &Value)> = clients
        .iter()
        .filter(|(_, c)| c["GenerateSecret"].as_bool() == Some(false))
        .collect();
    assert_eq!(public.len(), 1, "one public client, the buyer web page's");
    let (buyer_id, buyer) = public[0];
    assert_eq!(
        flows(buyer),
        ["code"],
        "{buyer_id}: the authorization code grant"
    );
    assert_eq!(
        ref_target(&buyer["CallbackURLs"]),
        Some("BuyerCallbackUrls")
    );
    let confidential: Vec<&(String, &Value)> = clients
        .iter()
        .filter(|(_, c)| c["GenerateSecret"].as_bool() == Some(true))
        .collect();
    assert_eq!(
        confidential.len(),
        2,
        "two clients with a secret, the operators' and the payments service's"
    );
    let admins: Vec<&(String, &Value)> = confidential
        .iter()
        .copied()
        .filter(|(_, c)| strings(&c["AllowedOAuthScopes"]).contains(DEFAULT_ADMIN_SCOPE))
        .collect();
    assert_eq!(admins.len(), 1, "one client may ask for the admin scope");
    let (operator_id, operator) = admins[0];
    assert_eq!(
        flows(operator),
        ["client_credentials"],
        "{operator_id}: only client credentials"
    );
    let operator_scopes: Vec<String> = sequence(&operator["AllowedOAuthScopes"])
        .iter()
        .filter_map(scalar_text)
        .collect();
    assert_eq!(operator_scopes, [DEFAULT_ADMIN_SCOPE], "{operator_id}");
    assert!(
        depends_on(&template.root["Resources"][operator_id.as_str()]).contains(&server_id.as_str()),
        "{operator_id} is created after the scope it may use"
    );

    // The API trusts the created pool, or the given issuer.
    let (_, api) = container_running(&template, "seatclaim-api");
    let environment = environment_of(api);
    let branches = |variable: &str| -> (Value, Value) {
        let value = environment
            .get(variable)
            .unwrap_or_else(|| panic!("the API gets {variable}"));
        let (function, arguments) = intrinsic(value).unwrap_or_else(|| panic!("{variable}"));
        let arguments = sequence(arguments);
        assert_eq!(function, "If", "{variable} depends on the pool");
        assert_eq!(arguments[0].as_str(), Some("CreateUserPool"), "{variable}");
        (arguments[1].clone(), arguments[2].clone())
    };
    let sub = |value: &Value| intrinsic(value).and_then(|(_, p)| p.as_str().map(str::to_owned));
    let issuer = format!("https://cognito-idp.${{AWS::Region}}.amazonaws.com/${{{pool}}}");
    let (created, given) = branches("SEATCLAIM_AUTH_ISSUER");
    assert_eq!(sub(&created), Some(issuer.clone()));
    assert_eq!(ref_target(&given), Some("AuthIssuer"));
    let (created, given) = branches("SEATCLAIM_AUTH_TOKEN_USE");
    assert_eq!(
        created.as_str(),
        Some("access"),
        "the pool's access tokens only"
    );
    assert_eq!(
        given.as_str(),
        Some(""),
        "a given issuer's tokens need not say"
    );
    let (created, given) = branches("SEATCLAIM_AUTH_JWKS_URL");
    assert_eq!(
        sub(&created),
        Some(format!("{issuer}/.well-known/jwks.json"))
    );
    assert_eq!(ref_target(&given), Some("AuthJwksUrl"));
    let (created, given) = branches("SEATCLAIM_AUTH_AUDIENCE");
    let (function, arguments) = intrinsic(&created).unwrap();
    let arguments = sequence(arguments);
    assert_eq!(function, "Join");
    assert_eq!(
        arguments[0].as_str(),
        Some(","),
        "a comma-separated list of audiences"
    );
    let audiences: BTreeSet<&str> = sequence(&arguments[1])
        .iter()
        .filter_map(ref_target)
        .collect();
    let all_clients: BTreeSet<&str> = clients.iter().map(|(id, _)| id.as_str()).collect();
    assert!(
        audiences.contains(buyer_id.as_str()) && audiences.contains(operator_id.as_str()),
        "the buyers' and operators' tokens are meant for the API: {audiences:?}"
    );
    assert_eq!(
        audiences, all_clients,
        "every client's tokens are meant for the API"
    );
    assert_eq!(ref_target(&given), Some("AuthAudience"));
    let (created, given) = branches("SEATCLAIM_UI_OIDC_CLIENT_ID");
    assert_eq!(
        ref_target(&created),
        Some(buyer_id.as_str()),
        "the web page signs in with the buyer client"
    );
    assert_eq!(ref_target(&given), Some("AuthUiClientId"));

    // Given an issuer, the stack creates no pool and passes the parameters.
    let parameters = template.parameters(&[("AuthJwksUrl", existing)]);
    let deployed = template.deployed(&parameters);
    assert!(
        !deployed.values().any(|r| r["Type"]
            .as_str()
            .is_some_and(|t| t.starts_with("AWS::Cognito::"))),
        "no pool when an issuer is given"
    );
    let (task, _) = container_running(&template, "seatclaim-api");
    let resolved = &deployed[task.as_str()]["Properties"]["ContainerDefinitions"][0];
    assert_eq!(
        environment_of(resolved)
            .get("SEATCLAIM_AUTH_JWKS_URL")
            .and_then(|v| ref_target(v)),
        Some("AuthJwksUrl")
    );
    for output in [
        "UserPoolId",
        "BuyerClientId",
        "OperatorClientId",
        "PaymentsClientId",
        "TokenEndpoint",
    ] {
        assert_eq!(
            template.root["Outputs"][output]["Condition"].as_str(),
            Some("CreateUserPool"),
            "output {output}"
        );
    }
}

// ------------------------------------------------------------------------------------- payments

/// A container's ECS secrets: name -> `ValueFrom`.
fn secrets_of(container: &Value) -> BTreeMap<String, &Value> {
    sequence(&container["Secrets"])
        .iter()
        .map(|pair| {
            (
                pair["Name"].as_str().unwrap().to_owned(),
                &pair["ValueFrom"],
            )
        })
        .collect()
}

/// Stripe's signing secret lives in Secrets Manager, never in the template: ECS gives it to the
/// API container alone when a task starts, fetching it with the execution role, which may read
/// exactly that secret; no task role may read any.
#[test]
fn the_stripe_webhook_secret_reaches_only_the_api_from_secrets_manager() {
    let template = Template::load();
    let secrets = template.resources("AWS::SecretsManager::Secret");
    assert_eq!(
        secrets.len(),
        1,
        "one secret, Stripe's webhook signing secret"
    );
    let (secret_id, secret) = &secrets[0];
    assert_eq!(
        template.text(&secret["Name"]),
        Some(format!("{}/stripe-webhook-secret", template.prefix()))
    );
    assert!(
        secret.get("SecretString").is_none(),
        "the template never holds the value"
    );
    assert!(
        secret["GenerateSecretString"]["PasswordLength"]
            .as_u64()
            .is_some_and(|length| length >= 32),
        "a random placeholder, which no Stripe event verifies against, until the operator puts \
         Stripe's: {:?}",
        secret["GenerateSecretString"]
    );
    assert!(
        template.root["Resources"][secret_id.as_str()]["Condition"].is_null(),
        "every stack has it"
    );

    // The API container gets it as an ECS secret (read at task start), not as plain environment.
    let (api_task, api) = container_running(&template, "seatclaim-api");
    let api_secrets = secrets_of(api);
    assert_eq!(
        api_secrets.keys().map(String::as_str).collect::<Vec<_>>(),
        [STRIPE_WEBHOOK_SECRET],
        "the API's one secret"
    );
    assert_eq!(
        ref_target(api_secrets[STRIPE_WEBHOOK_SECRET]),
        Some(secret_id.as_str()),
        "ValueFrom is the secret's ARN"
    );
    assert!(
        !environment_of(api).contains_key(STRIPE_WEBHOOK_SECRET),
        "not in the API's plain environment"
    );

    // No other container gets it, the worker's least.
    let (_, worker) = container_running(&template, "seatclaim-worker");
    assert!(
        secrets_of(worker).is_empty()
            && !environment_of(worker).contains_key(STRIPE_WEBHOOK_SECRET),
        "the worker does not get the secret"
    );
    for (task, properties) in template.resources("AWS::ECS::TaskDefinition") {
        for container in sequence(&properties["ContainerDefinitions"]) {
            let name = container["Name"].as_str().unwrap();
            if task == api_task {
                continue;
            }
            assert!(
                !format!("{container:?}").contains(&format!("\"{secret_id}\"")),
                "{task} ({name}) refers to {secret_id}"
            );
            assert!(
                !environment_of(container).contains_key(STRIPE_WEBHOOK_SECRET)
                    && !secrets_of(container).contains_key(STRIPE_WEBHOOK_SECRET),
                "{task} ({name}) gets {STRIPE_WEBHOOK_SECRET}"
            );
        }
    }

    // ECS's agent reads it with the execution role: exactly that secret, by its ARN (!Ref), and
    // no other Secrets Manager right. The task roles (what the code runs with) get none.
    let task = &template.root["Resources"][api_task.as_str()]["Properties"];
    let (execution_role, _) = get_att(&task["ExecutionRoleArn"]).unwrap();
    let secret_rights = |role: &str| -> BTreeSet<(String, String)> {
        grants(&template, role)
            .into_iter()
            .filter(|(action, _)| action.to_ascii_lowercase().starts_with("secretsmanager:"))
            .collect()
    };
    assert_eq!(
        secret_rights(&execution_role),
        pairs(&[("secretsmanager:GetSecretValue", secret_id.as_str())]),
        "{execution_role} may read the one secret and nothing wider"
    );
    for role in ["ApiTaskRole", "WorkerTaskRole", "OperatorRole"] {
        assert!(
            secret_rights(role).is_empty(),
            "{role} reads secrets: {:?}",
            secret_rights(role)
        );
    }
}

/// The payments service's client: confidential, client credentials only, and only the payments
/// scope (not admin), whose tokens the API accepts.
#[test]
fn a_payments_client_may_use_the_payments_scope_only() {
    let template = Template::load();
    let (server_id, server) = template.only("AWS::Cognito::UserPoolResourceServer");
    let identifier = server["Identifier"].as_str().unwrap();
    let (_, scope_name) = PAYMENTS_SCOPE.split_once('/').unwrap();
    assert!(
        PAYMENTS_SCOPE.starts_with(&format!("{identifier}/"))
            && sequence(&server["Scopes"])
                .iter()
                .any(|scope| scope["ScopeName"].as_str() == Some(scope_name)),
        "{server_id} defines {PAYMENTS_SCOPE}"
    );

    let payments: Vec<(String, &Value)> = template
        .resources("AWS::Cognito::UserPoolClient")
        .into_iter()
        .filter(|(_, client)| strings(&client["AllowedOAuthScopes"]).contains(PAYMENTS_SCOPE))
        .collect();
    assert_eq!(payments.len(), 1, "one client may ask for {PAYMENTS_SCOPE}");
    let (client_id, client) = &payments[0];
    assert_eq!(
        strings(&client["AllowedOAuthScopes"]),
        BTreeSet::from([PAYMENTS_SCOPE.to_owned()]),
        "{client_id}: the payments scope only"
    );
    assert_eq!(
        strings(&client["AllowedOAuthFlows"]),
        BTreeSet::from(["client_credentials".to_owned()]),
        "{client_id}: only client credentials"
    );
    assert_eq!(
        client["GenerateSecret"].as_bool(),
        Some(true),
        "{client_id}: a confidential client"
    );
    assert!(
        !strings(&client["ExplicitAuthFlows"])
            .iter()
            .any(|flow| flow.contains("PASSWORD") || flow.contains("USER_AUTH")),
        "{client_id}: no user signs in with it"
    );
    let resource = &template.root["Resources"][client_id.as_str()];
    assert_eq!(resource["Condition"].as_str(), Some("CreateUserPool"));
    assert!(
        depends_on(resource).contains(&server_id.as_str()),
        "{client_id} is created after the scope it may use"
    );

    // Its tokens are meant for the API.
    let (_, api) = container_running(&template, "seatclaim-api");
    let audience = environment_of(api)["SEATCLAIM_AUTH_AUDIENCE"];
    let (_, branches) = intrinsic(audience).unwrap();
    let (function, arguments) = intrinsic(&sequence(branches)[1]).unwrap();
    assert_eq!(function, "Join");
    assert!(
        sequence(&sequence(arguments)[1])
            .iter()
            .any(|id| ref_target(id) == Some(client_id.as_str())),
        "SEATCLAIM_AUTH_AUDIENCE names {client_id}"
    );
    let output = &template.root["Outputs"]["PaymentsClientId"];
    assert_eq!(ref_target(&output["Value"]), Some(client_id.as_str()));
    assert_eq!(output["Condition"].as_str(), Some("CreateUserPool"));
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
