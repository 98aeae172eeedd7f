//! The deployment files: edge.

use super::*;

#[test]
pub(crate) fn the_stack_refuses_plain_http_unless_a_test_stack_allows_it() {
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
pub(crate) fn with_a_certificate_http_redirects_to_https_and_https_forwards() {
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
pub(crate) fn a_waf_rule_limits_each_bearer_token_across_the_tasks() {
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

/// WAF turns a header into a rate-based rule's key by its text transformations, lowest priority
/// first. Without them the per-buyer rule would count `Bearer`, `bearer` and `Bearer  ` (two
/// spaces) before the same token as three buyers, each with a limit of its own: the key must
/// not change with the scheme's case or the white space, and must still tell tokens apart.
#[test]
pub(crate) fn the_per_buyer_key_ignores_the_case_and_the_spacing_of_the_authorization_header() {
    let template = Template::load();
    let acl_id = web_acl_of_scope(&template, "REGIONAL");
    let parameters = template.parameters(&[
        ("CertificateArn", CERTIFICATE),
        ("ApiDomainName", API_DOMAIN),
    ]);
    let deployed = template.deployed(&parameters);
    let keys: Vec<&Value> = sequence(&deployed[acl_id.as_str()]["Properties"]["Rules"])
        .iter()
        .map(|rule| &rule["Statement"]["RateBasedStatement"])
        .filter(|statement| statement["AggregateKeyType"].as_str() == Some("CUSTOM_KEYS"))
        .flat_map(|statement| sequence(&statement["CustomKeys"]))
        .collect();
    assert_eq!(keys.len(), 1, "the bearer token is the one custom key");
    let transformations = sequence(&keys[0]["Header"]["TextTransformations"]);
    let priorities: BTreeSet<u64> = transformations
        .iter()
        .map(|t| t["Priority"].as_u64().expect("a priority"))
        .collect();
    assert_eq!(
        priorities.len(),
        transformations.len(),
        "WAF wants every priority different: {transformations:?}"
    );
    let key = |header: &str| waf_transformed(header, transformations);

    let token = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJidXllci0xIn0.c2lnbmF0dXJl";
    let other = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJidXllci0yIn0.b3RoZXJzaWdu";
    let same = key(&format!("Bearer {token}"));
    for variant in [
        format!("bearer {token}"),
        format!("BEARER {token}"),
        format!("Bearer  {token}"),
        format!("Bearer\t{token}"),
        format!("bEaReR \t {token}"),
    ] {
        assert_eq!(key(&variant), same, "{variant:?} counts as the same buyer");
    }
    assert_ne!(
        key(&format!("Bearer {other}")),
        same,
        "another token is another buyer"
    );
}

/// A header as WAF's text transformations leave it, applied in priority order. Only the types
/// the template uses are modelled; any other fails the test until it is added here.
fn waf_transformed(value: &str, transformations: &[Value]) -> String {
    let mut ordered: Vec<&Value> = transformations.iter().collect();
    ordered.sort_by_key(|t| t["Priority"].as_u64());
    let mut text = value.to_owned();
    for transformation in ordered {
        text = match transformation["Type"].as_str() {
            Some("NONE") => text,
            Some("LOWERCASE") => text.to_ascii_lowercase(),
            // \f \t \n \r \v and the non-breaking space become spaces, then each run of
            // spaces one space (the AWS WAF developer guide's "Text transformation options").
            Some("COMPRESS_WHITE_SPACE") => {
                let spaced: String = text
                    .chars()
                    .map(|c| {
                        if matches!(c, '\u{c}' | '\t' | '\n' | '\r' | '\u{b}' | '\u{a0}') {
                            ' '
                        } else {
                            c
                        }
                    })
                    .collect();
                let mut compressed = String::with_capacity(spaced.len());
                for c in spaced.chars() {
                    if !(c == ' ' && compressed.ends_with(' ')) {
                        compressed.push(c);
                    }
                }
                compressed
            }
            other => panic!("text transformation {other:?} is not modelled here"),
        };
    }
    text
}

/// The logical id of the template's one web ACL of this scope (REGIONAL or CLOUDFRONT).
pub(crate) fn web_acl_of_scope(template: &Template, scope: &str) -> String {
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
pub(crate) fn a_waf_web_acl_limits_each_client_address_at_the_load_balancer() {
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
pub(crate) fn the_load_balancer_logs_its_requests_to_the_stacks_bucket() {
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
    assert_blocks_public_access(properties, "the log bucket");
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
