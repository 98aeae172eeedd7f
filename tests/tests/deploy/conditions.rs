//! The deployment files: conditions and rules.

use super::*;

/// A certificate, for the stacks that have one.
pub(crate) const CERTIFICATE: &str = "arn:aws:acm:eu-west-1:111122223333:certificate/abcd";

/// The API's own name, covered by [`CERTIFICATE`]: the page's distribution reaches the API by it.
pub(crate) const API_DOMAIN: &str = "api.tickets.example.com";

/// The Region of a deployment, unless a test names another (`("AWS::Region", ...)`): not
/// us-east-1, where the stack also creates the page distribution's CloudFront web ACL.
pub(crate) const REGION: &str = "eu-west-1";

/// Parameter name -> the value a deployment passes (and pseudo parameters, `AWS::Region`).
pub(crate) type Parameters = BTreeMap<String, String>;

impl Template {
    /// The parameter values of a deployment in [`REGION`]: every default, with these overrides.
    pub(crate) fn parameters(&self, overrides: &[(&str, &str)]) -> Parameters {
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
    pub(crate) fn condition(&self, name: &str, parameters: &Parameters) -> bool {
        let expression = self.root["Conditions"]
            .get(name)
            .unwrap_or_else(|| panic!("the template has no condition {name}"));
        self.holds(expression, parameters)
    }

    /// A condition or rule expression (`Fn::Equals`, `Fn::Not`, `Fn::And`, `Fn::Or`,
    /// `Condition`) evaluated for these parameter values.
    pub(crate) fn holds(&self, expression: &Value, parameters: &Parameters) -> bool {
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
    pub(crate) fn operand(&self, value: &Value, parameters: &Parameters) -> String {
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
    pub(crate) fn refusals(&self, parameters: &Parameters) -> Vec<String> {
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
    pub(crate) fn resolve(&self, value: &Value, parameters: &Parameters) -> Option<Value> {
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
    pub(crate) fn deployed(&self, parameters: &Parameters) -> BTreeMap<String, Value> {
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
    pub(crate) fn only(&self, kind: &str) -> (String, &Value) {
        let mut found = self.resources(kind);
        assert_eq!(found.len(), 1, "the template has one {kind}");
        found.remove(0)
    }
}

/// The deployed resources of a type: (logical id, properties).
pub(crate) fn deployed_of<'a>(
    deployed: &'a BTreeMap<String, Value>,
    kind: &str,
) -> Vec<(&'a str, &'a Value)> {
    deployed
        .iter()
        .filter(|(_, resource)| resource["Type"].as_str() == Some(kind))
        .map(|(id, resource)| (id.as_str(), &resource["Properties"]))
        .collect()
}

/// A small template that uses every function the evaluator reads, in both the short (`!Not`) and
/// the long (`Fn::Equals`) forms.
const SMALL: &str = r#"
Parameters:
  Certificate: {Type: String, Default: ""}
  Plain: {Type: String, Default: "false"}
Conditions:
  HasCertificate: !Not [!Equals [!Ref Certificate, ""]]
  AllowsPlain: {"Fn::Equals": [{"Ref": Plain}, "true"]}
  Served: !Or [!Condition HasCertificate, !Condition AllowsPlain]
Rules:
  Secure:
    Assertions:
      - Assert: {"Fn::Or": [{"Condition": HasCertificate}, {"Condition": AllowsPlain}]}
        AssertDescription: needs a certificate
Resources:
  Listener:
    Type: AWS::ElasticLoadBalancingV2::Listener
    Condition: Served
    Properties:
      Port: !If [HasCertificate, 443, 80]
      Certificates: !If [HasCertificate, [{CertificateArn: !Ref Certificate}], !Ref AWS::NoValue]
"#;

fn small() -> Template {
    let root: Value = serde_norway::from_str(SMALL).unwrap();
    let defaults = [("Certificate", ""), ("Plain", "false")]
        .iter()
        .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
        .collect();
    Template { root, defaults }
}

#[test]
fn the_evaluator_refuses_and_omits_what_the_defaults_leave_out() {
    let template = small();
    let defaults = template.parameters(&[]);
    assert!(!template.condition("HasCertificate", &defaults));
    assert!(!template.condition("Served", &defaults));
    assert_eq!(template.refusals(&defaults), ["needs a certificate"]);
    assert!(!template.deployed(&defaults).contains_key("Listener"));
}

#[test]
fn the_evaluator_picks_each_branch_of_fn_if_and_drops_no_value() {
    let template = small();
    let secure = template.parameters(&[("Certificate", "arn:cert")]);
    assert!(template.refusals(&secure).is_empty());
    let listener = &template.deployed(&secure)["Listener"]["Properties"];
    assert_eq!(listener["Port"].as_u64(), Some(443));
    assert_eq!(
        ref_target(&listener["Certificates"][0]["CertificateArn"]),
        Some("Certificate")
    );

    let plain = template.parameters(&[("Plain", "true")]);
    let listener = &template.deployed(&plain)["Listener"]["Properties"];
    assert_eq!(listener["Port"].as_u64(), Some(80));
    assert!(
        listener.get("Certificates").is_none(),
        "AWS::NoValue drops the key"
    );
}
