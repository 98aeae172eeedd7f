//! The deployment files in `deploy/` agree with the code: this suite parses the CloudFormation
//! template and the compose file and compares them with what the binaries use, so renaming a
//! table, an index, a queue or a setting in the code fails here until the templates follow.
//!
//! - tables: names from `AwsNames::from_settings`, keys, attribute types and indexes from
//!   `table_specs` (every index projecting all attributes), every table deletion-protected;
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
//!   the page's distribution relays) and per bearer token (whatever the case and spacing of the
//!   `Authorization` header), access logs to a bucket;
//! - the seat map's rate rule on the page's distribution (cache hits never reach the load
//!   balancer): a CLOUDFRONT web ACL the stack creates in us-east-1 or is given
//!   (`PageWebAclArn`), the same in `deploy/cloudformation/page-waf.yaml`;
//! - the buyer web page on CloudFront (`UiDistribution`): the page from a private bucket through
//!   an origin access control, the API's paths to the load balancer (uncached but the seat map,
//!   which follows the API's `Cache-Control` per section), HTTPS for viewers, the function that
//!   answers page paths with `index.html`, none of it without `UiDistribution`, and
//!   `deploy/publish-ui.sh` uploading every file of `api/ui`;
//! - identity: the Cognito pool, its admin and payments scopes (the API's), the buyers' public
//!   client and the operators' and payments service's client-credentials clients, the issuer
//!   settings the API gets, and no self sign-up unless `SelfSignUp` turns it on, then with
//!   threat protection enforced on the Plus tier;
//! - every parameter in one of the console's parameter groups;
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

use seatclaim_aws::{AwsNames, table_specs};
use seatclaim_core::domain::EVENT_SOURCE;
use seatclaim_core::identity::{DEFAULT_ADMIN_SCOPE, PAYMENTS_SCOPE};
use seatclaim_e2e::binary;
use seatclaim_runtime::config::{AwsSettings, BackendSettings};
use serde_norway::{Mapping, Value};

const TEMPLATE: &str = "deploy/cloudformation/seatclaim.yaml";
/// The CloudFront web ACL for a stack outside us-east-1, deployed in us-east-1.
const PAGE_WAF: &str = "deploy/cloudformation/page-waf.yaml";
const COMPOSE: &str = "deploy/compose.yaml";
const DOCKERFILE: &str = "deploy/Dockerfile";

/// The API's setting that holds Stripe's webhook signing secret (`whsec_...`).
const STRIPE_WEBHOOK_SECRET: &str = "SEATCLAIM_PAYMENTS_STRIPE_WEBHOOK_SECRET";
/// The API's access-code key, an ECS secret.
const ACCESS_CODE_KEY: &str = "SEATCLAIM_ACCESS_CODE_KEY";

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

mod capacity;
/// Asserts that a bucket's properties block every kind of public access.
fn assert_blocks_public_access(properties: &Value, bucket: &str) {
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
}

mod conditions;
mod edge;
mod events;
mod iam;
mod identity;
mod images;
mod page;
mod page_waf;
mod payments;
mod queues;
mod settings;
mod tables;

use conditions::*;
use edge::*;
use iam::*;
use page::*;
use payments::*;
use settings::*;
