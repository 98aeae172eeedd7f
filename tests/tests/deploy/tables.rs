//! The deployment files: tables.

use super::*;

/// (hash attribute, range attribute) of a `KeySchema`.
pub(crate) fn key_schema(schema: &Value) -> (String, Option<String>) {
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
pub(crate) fn every_table_matches_the_code_in_name_keys_types_and_indexes() {
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

    let ttl = &tables[names.jobs_table.as_str()]["TimeToLiveSpecification"];
    assert_eq!(
        ttl["Enabled"].as_bool(),
        Some(true),
        "the aliases of version 2's idempotency keys expire"
    );
    let ttl_attribute = ttl["AttributeName"].as_str().unwrap();
    // The attribute name is a literal where aliases are made; make sure it is still written.
    let migration = read("shared/aws/src/setup/migrate.rs");
    assert!(
        migration.contains(&format!("\"{ttl_attribute}\"")),
        "the jobs table's TTL attribute {ttl_attribute} is no longer written by the code"
    );
}

/// A sale needs all four tables: the events' terms, the seats, the jobs, and the outbox with its
/// unpublished events, waitlists and pre-queue. Losing any one of them to a stack delete or a
/// console click stops the sale, so none may be dropped until its protection is turned off on
/// purpose; a table added later is covered too.
#[test]
pub(crate) fn every_table_is_deletion_protected() {
    let template = Template::load();
    let tables = template.resources("AWS::DynamoDB::Table");
    assert_eq!(
        tables.len(),
        table_specs(&template.names()).len(),
        "every table the code uses"
    );
    for (id, table) in &tables {
        assert_eq!(
            table["DeletionProtectionEnabled"].as_bool(),
            Some(true),
            "{id} is deletion-protected"
        );
    }
    assert!(
        template.resources("AWS::DynamoDB::GlobalTable").is_empty(),
        "a global table would need its protection set per replica"
    );
}
