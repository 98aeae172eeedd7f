//! The deployment files: identity.

use super::*;

#[test]
pub(crate) fn without_an_issuer_the_stack_creates_the_cognito_pool_the_api_trusts() {
    let template = Template::load();
    assert_eq!(
        template.defaults["AuthJwksUrl"], "",
        "a pool unless told otherwise"
    );
    let existing =
        "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbCdEf/.well-known/jwks.json";
    assert!(template.condition("CreateUserPool", &template.parameters(&[])));
    // A given issuer comes with its issuer and audience, as the API requires of a JWKS.
    let refused = |overrides: &[(&str, &str)]| -> Vec<String> {
        let refusals = template.refusals(&template.parameters(overrides));
        refusals
            .into_iter()
            .filter(|why| why.contains("AuthJwksUrl"))
            .collect()
    };
    assert_eq!(refused(&[("AuthJwksUrl", existing)]).len(), 1);
    let issuer = "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbCdEf";
    let only_issuer = [("AuthJwksUrl", existing), ("AuthIssuer", issuer)];
    assert_eq!(refused(&only_issuer).len(), 1, "an issuer and no audience");
    let given = [
        ("AuthJwksUrl", existing),
        ("AuthIssuer", issuer),
        ("AuthAudience", "buyers"),
    ];
    assert!(refused(&given).is_empty(), "{:?}", refused(&given));
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

/// Every account in the pool is a buyer with a seat limit, a pre-queue ticket and waitlist places
/// of its own, so open sign-up lets one person multiply them. The pool therefore takes no
/// sign-ups unless `SelfSignUp` says so, and a pool that does takes them under Cognito's threat
/// protection, enforced, on the Plus tier (the only one Cognito allows it on: a Lite pool with
/// it on is refused, and cfn-lint does not check the pairing).
#[test]
pub(crate) fn buyers_sign_up_only_when_a_parameter_allows_it_and_then_under_threat_protection() {
    let template = Template::load();
    let allowed: BTreeSet<String> =
        sequence(&template.root["Parameters"]["SelfSignUp"]["AllowedValues"])
            .iter()
            .filter_map(scalar_text)
            .collect();
    assert_eq!(
        allowed,
        BTreeSet::from(["true", "false"].map(str::to_owned))
    );
    assert_eq!(
        template.defaults["SelfSignUp"], "false",
        "no sign-up unless told otherwise"
    );

    let (pool_id, _) = template.only("AWS::Cognito::UserPool");
    for (self_sign_up, open, mode, tier) in [
        (None, false, "OFF", "LITE"),
        (Some("false"), false, "OFF", "LITE"),
        (Some("true"), true, "ENFORCED", "PLUS"),
    ] {
        let overrides: Vec<(&str, &str)> = self_sign_up
            .map(|value| ("SelfSignUp", value))
            .into_iter()
            .collect();
        let parameters = template.parameters(&overrides);
        let deployed = template.deployed(&parameters);
        let pool = &deployed[pool_id.as_str()]["Properties"];
        let what = format!("SelfSignUp {self_sign_up:?}");
        assert_eq!(
            pool["AdminCreateUserConfig"]["AllowAdminCreateUserOnly"].as_bool(),
            Some(!open),
            "{what}: only operators make accounts unless sign-up is open"
        );
        assert_eq!(
            pool["UserPoolAddOns"]["AdvancedSecurityMode"].as_str(),
            Some(mode),
            "{what}: threat protection"
        );
        assert_eq!(pool["UserPoolTier"].as_str(), Some(tier), "{what}: tier");
        assert!(
            mode == "OFF" || tier == "PLUS",
            "{what}: Cognito has threat protection on the Plus tier only"
        );
    }

    let identity: Vec<&Value> =
        sequence(&template.root["Metadata"]["AWS::CloudFormation::Interface"]["ParameterGroups"])
            .iter()
            .filter(|group| {
                strings(&group["Parameters"]).contains("AuthJwksUrl")
                    && strings(&group["Parameters"]).contains("SelfSignUp")
            })
            .collect();
    assert_eq!(
        identity.len(),
        1,
        "SelfSignUp is shown with the other identity parameters"
    );
}
