//! The deployment files: the page on CloudFront.

use super::*;

/// CloudFront's managed policies the distribution uses, by their documented ids (CloudFront
/// developer guide, "Use managed cache policies" and "Use managed origin request policies").
pub(crate) const MANAGED_POLICIES: &[(&str, &str)] = &[
    ("CachingOptimized", "658327ea-f89d-4fab-a63d-7e88639e58f6"),
    ("CachingDisabled", "4135ea2d-6df8-44a3-9df3-4b5a84be39ad"),
    (
        "AllViewerExceptHostHeader",
        "b689b0a8-53d0-40ab-baf2-68738e2966ac",
    ),
];

/// Every method CloudFront can pass to an origin.
pub(crate) const ALL_METHODS: [&str; 7] =
    ["GET", "HEAD", "OPTIONS", "PUT", "POST", "PATCH", "DELETE"];

pub(crate) const PUBLISH_UI: &str = "deploy/publish-ui.sh";
pub(crate) const UI_DIR: &str = "api/ui";

/// The parameters of a stack with the page's distribution, with or without a certificate.
pub(crate) fn ui_stack(template: &Template, certificate: bool) -> Parameters {
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
pub(crate) fn deployed_distribution(deployed: &BTreeMap<String, Value>) -> (&str, &Value) {
    let found = deployed_of(deployed, "AWS::CloudFront::Distribution");
    assert_eq!(found.len(), 1, "the stack has one distribution");
    (found[0].0, &found[0].1["DistributionConfig"])
}

/// Every cache behavior, in the order CloudFront tries them (the ordered ones, then the
/// default): (path pattern, or "default", behavior).
pub(crate) fn behaviors(config: &Value) -> Vec<(String, &Value)> {
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

pub(crate) fn behavior<'a>(config: &'a Value, path: &str) -> &'a Value {
    behaviors(config)
        .into_iter()
        .find(|(pattern, _)| pattern == path)
        .unwrap_or_else(|| panic!("the distribution has no behavior for {path}"))
        .1
}

/// The origin a behavior sends its requests to.
pub(crate) fn origin_of<'a>(config: &'a Value, path: &str) -> &'a Value {
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
pub(crate) fn managed_policy(template: &Template, id: &Value) -> Option<&'static str> {
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
pub(crate) fn policy_resource<'a>(template: &'a Template, id: &Value, kind: &str) -> &'a Value {
    let target = ref_target(id).unwrap_or_else(|| panic!("not a !Ref: {id:?}"));
    assert_eq!(template.resource_type(target), Some(kind), "{target}");
    &template.root["Resources"][target]["Properties"]
}

/// The viewer headers an origin request carries.
pub(crate) enum Forwarded {
    /// Every one but Host (AllViewerExceptHostHeader).
    AllButHost,
    /// These (lower-case).
    Only(BTreeSet<String>),
}

impl Forwarded {
    pub(crate) fn includes(&self, header: &str) -> bool {
        match self {
            Self::AllButHost => !header.eq_ignore_ascii_case("host"),
            Self::Only(headers) => headers.contains(&header.to_ascii_lowercase()),
        }
    }
}

/// What a behavior's origin request policy forwards of the viewer's headers (besides the cache
/// key's).
pub(crate) fn forwarded_headers(template: &Template, id: &Value) -> Forwarded {
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

pub(crate) fn strings(value: &Value) -> BTreeSet<String> {
    sequence(value).iter().filter_map(scalar_text).collect()
}

#[test]
pub(crate) fn the_page_is_served_from_its_bucket_through_an_origin_access_control() {
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
    assert_blocks_public_access(properties, &bucket);
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
pub(crate) fn the_api_paths_go_to_the_load_balancer_and_only_the_seat_map_is_cached() {
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
pub(crate) fn the_seat_map_is_cached_as_the_api_says_and_keyed_on_its_section() {
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
pub(crate) fn viewers_of_the_page_are_redirected_to_https() {
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
pub(crate) fn the_page_function_answers_every_page_path_with_index_html() {
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
pub(crate) fn without_ui_distribution_the_stack_has_no_page_bucket_or_distribution() {
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
pub(crate) fn ui_files() -> BTreeSet<String> {
    std::fs::read_dir(repo_file(UI_DIR))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect()
}

#[test]
pub(crate) fn publish_ui_uploads_every_file_of_the_page() {
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
pub(crate) fn every_answer_of_the_distribution_carries_hsts_and_the_security_headers() {
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
pub(crate) fn the_distribution_reaches_the_api_by_its_name_and_serves_its_own_with_a_certificate() {
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
