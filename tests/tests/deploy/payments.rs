//! The deployment files: payments.

use super::*;

/// A container's ECS secrets: name -> `ValueFrom`.
pub(crate) fn secrets_of(container: &Value) -> BTreeMap<String, &Value> {
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

/// The API's secrets (Stripe's signing secret, the access codes' key) live in Secrets Manager,
/// never in the template: ECS gives each to the API container alone when a task starts,
/// fetching it with the execution role, which may read exactly those secrets; no task role may
/// read any.
#[test]
pub(crate) fn the_apis_secrets_reach_only_the_api_from_secrets_manager() {
    let template = Template::load();
    let secrets = template.resources("AWS::SecretsManager::Secret");
    assert_eq!(
        secrets.len(),
        2,
        "two secrets, Stripe's webhook signing secret and the access codes' key"
    );
    let (api_task, api) = container_running(&template, "seatclaim-api");
    assert_eq!(
        secrets_of(api)
            .keys()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        [ACCESS_CODE_KEY, STRIPE_WEBHOOK_SECRET],
        "the API's secrets"
    );
    let mut ids = [""; 2];
    for (n, (name, variable)) in [
        ("stripe-webhook-secret", STRIPE_WEBHOOK_SECRET),
        ("access-code-key", ACCESS_CODE_KEY),
    ]
    .into_iter()
    .enumerate()
    {
        let (secret_id, secret) = (secrets.iter())
            .find(|(_, secret)| {
                template.text(&secret["Name"]) == Some(format!("{}/{name}", template.prefix()))
            })
            .unwrap_or_else(|| panic!("a secret named <prefix>/{name}"));
        assert!(
            secret.get("SecretString").is_none(),
            "the template never holds the value"
        );
        assert!(
            secret["GenerateSecretString"]["PasswordLength"]
                .as_u64()
                .is_some_and(|length| length >= 32),
            "a random value of 32 characters or more: {:?}",
            secret["GenerateSecretString"]
        );
        assert!(
            template.root["Resources"][secret_id.as_str()]["Condition"].is_null(),
            "every stack has it"
        );
        reaches_only_the_api(&template, (&api_task, api), (secret_id, variable));
        ids[n] = secret_id.as_str();
    }

    // ECS's agent reads them with the execution role: exactly those secrets, by their ARN
    // (!Ref), and no other Secrets Manager right. The task roles (what the code runs with) get
    // none.
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
        pairs(&ids.map(|id| ("secretsmanager:GetSecretValue", id))),
        "{execution_role} may read the two secrets and nothing wider"
    );
    for role in ["ApiTaskRole", "WorkerTaskRole", "OperatorRole"] {
        assert!(
            secret_rights(role).is_empty(),
            "{role} reads secrets: {:?}",
            secret_rights(role)
        );
    }
}

/// The API container gets `variable` as an ECS secret (read at task start) from `secret_id`,
/// not as plain environment; no other container gets it, the worker's least.
fn reaches_only_the_api(
    template: &Template,
    (api_task, api): (&str, &Value),
    (secret_id, variable): (&str, &str),
) {
    assert_eq!(
        ref_target(secrets_of(api)[variable]),
        Some(secret_id),
        "{variable}'s ValueFrom is the secret's ARN"
    );
    assert!(
        !environment_of(api).contains_key(variable),
        "{variable} is not in the API's plain environment"
    );
    let (_, worker) = container_running(template, "seatclaim-worker");
    assert!(
        secrets_of(worker).is_empty() && !environment_of(worker).contains_key(variable),
        "the worker does not get {variable}"
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
                !environment_of(container).contains_key(variable)
                    && !secrets_of(container).contains_key(variable),
                "{task} ({name}) gets {variable}"
            );
        }
    }
}

/// The stack takes live payments only, from the platform's own account: the API reads a
/// test-mode event, or a Connect account's, as paying for nothing.
#[test]
pub(crate) fn the_api_takes_live_stripe_payments_only() {
    let template = Template::load();
    let (_, api) = container_running(&template, "seatclaim-api");
    let environment = environment_of(api);
    assert_eq!(
        environment
            .get("SEATCLAIM_PAYMENTS_STRIPE_LIVEMODE")
            .and_then(|value| value.as_str()),
        Some("true"),
        "the API's environment: {environment:?}"
    );
    assert!(
        !environment.contains_key("SEATCLAIM_PAYMENTS_STRIPE_ACCOUNTS"),
        "no Connect account's events pay"
    );
    assert!(
        accepted_settings("seatclaim-api").contains("SEATCLAIM_PAYMENTS_STRIPE_LIVEMODE"),
        "the API reads the setting"
    );
    let (_, worker) = container_running(&template, "seatclaim-worker");
    assert!(
        !environment_of(worker).contains_key("SEATCLAIM_PAYMENTS_STRIPE_LIVEMODE"),
        "the worker reads no payment"
    );
}

/// The payments service's client: confidential, client credentials only, and only the payments
/// scope (not admin), whose tokens the API accepts.
#[test]
pub(crate) fn a_payments_client_may_use_the_payments_scope_only() {
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
