//! The deployment files: the seat map's CloudFront WAF.

use super::*;

/// A CLOUDFRONT web ACL of someone else's (page-waf.yaml's, deployed in us-east-1).
pub(crate) const PAGE_WEB_ACL: &str =
    "arn:aws:wafv2:us-east-1:111122223333:global/webacl/seatclaim-eu-west-1-page/0a1b2c3d-4e5f";

/// Whether WAF's scope-down `statement` matches a request for `path` (the statements the web ACLs
/// use: byte matches on the URI path without transformation, and their conjunctions).
pub(crate) fn matches_path(statement: &Value, path: &str) -> bool {
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
pub(crate) fn the_page_distribution_uses_the_stacks_cloudfront_web_acl_in_us_east_1_or_the_given_one()
 {
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
pub(crate) fn the_cloudfront_web_acl_counts_each_viewers_seat_map_requests() {
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
pub(crate) fn page_waf_yaml_creates_the_same_cloudfront_web_acl_for_other_regions() {
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
