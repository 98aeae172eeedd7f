//! Reading the DynamoDB JSON protocol as the code sends it: attribute values, the update
//! expressions the adapters write (`SET a = :v, b = c REMOVE d`), items, query keys and a
//! transaction's writes, and the consumed capacity of an answer.

use std::collections::HashMap;

use serde_json::Value;

/// A string or number attribute value as text.
pub fn text(value: &Value) -> Option<String> {
    value
        .get("S")
        .or_else(|| value.get("N"))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// What a write does to one item.
pub enum Change {
    /// The whole item is replaced by these attributes.
    Put(HashMap<String, String>),
    /// Attributes are set and removed.
    Update {
        /// (attribute, what it is set to).
        set: Vec<(String, Operand)>,
        /// Attributes removed.
        remove: Vec<String>,
    },
    /// The item is deleted.
    Delete,
}

/// The right-hand side of a `SET`.
pub enum Operand {
    /// A value.
    Value(String),
    /// Another attribute of the same item.
    Copy(String),
    /// Anything else (a function): not followed.
    Other,
}

fn attribute_name(token: &str, names: &Value) -> String {
    let token = token.trim();
    names
        .get(token)
        .and_then(Value::as_str)
        .map_or_else(|| token.to_owned(), str::to_owned)
}

/// Splits at commas outside parentheses.
fn top_level(list: &str) -> Vec<&str> {
    let (mut depth, mut start, mut parts) = (0_i32, 0, Vec::new());
    for (at, c) in list.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&list[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    parts.push(&list[start..]);
    parts
}

/// Parses the code's update expressions: `SET a = :v, b = c, d = f(..) REMOVE e, f`.
pub fn parse_update(request: &Value) -> Change {
    let expression = request["UpdateExpression"].as_str().unwrap_or_default();
    let (names, values) = (
        &request["ExpressionAttributeNames"],
        &request["ExpressionAttributeValues"],
    );
    let (set_part, remove_part) = match expression.find("REMOVE") {
        Some(at) => (&expression[..at], &expression[at + "REMOVE".len()..]),
        None => (expression, ""),
    };
    let set_part = set_part.trim().strip_prefix("SET").unwrap_or("");
    let set = top_level(set_part)
        .into_iter()
        .filter_map(|assignment| assignment.split_once('='))
        .map(|(lhs, rhs)| {
            let rhs = rhs.trim();
            let operand = if rhs.starts_with(':') {
                text(&values[rhs]).map_or(Operand::Other, Operand::Value)
            } else if rhs
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '#')
            {
                Operand::Copy(attribute_name(rhs, names))
            } else {
                Operand::Other
            };
            (attribute_name(lhs, names), operand)
        })
        .collect();
    let remove = remove_part
        .split(',')
        .filter(|name| !name.trim().is_empty())
        .map(|name| attribute_name(name, names))
        .collect();
    Change::Update { set, remove }
}

/// An item's string and number attributes, as text.
pub fn item_values(item: &Value) -> HashMap<String, String> {
    item.as_object()
        .into_iter()
        .flatten()
        .filter_map(|(name, value)| text(value).map(|v| (name.clone(), v)))
        .collect()
}

/// The consumed capacity of `table` in an answer (one object, or a list of them).
pub fn consumed_for<'a>(answer: &'a Value, table: &str) -> Option<&'a Value> {
    match &answer["ConsumedCapacity"] {
        Value::Array(list) => list.iter().find(|c| c["TableName"] == table),
        object @ Value::Object(_) => Some(object),
        _ => None,
    }
}

/// The partition-key value a query asks for.
pub fn query_key(request: &Value) -> Option<String> {
    let condition = request["KeyConditionExpression"].as_str()?;
    let first = condition.split(" AND ").next()?;
    let (_, placeholder) = first.split_once('=')?;
    text(&request["ExpressionAttributeValues"][placeholder.trim()])
}

/// A transaction's writes, by table.
pub fn transaction_items(request: &Value) -> HashMap<String, Vec<(Value, Change)>> {
    let mut by_table: HashMap<String, Vec<(Value, Change)>> = HashMap::new();
    for entry in request["TransactItems"].as_array().into_iter().flatten() {
        let (table, item) = if let Some(put) = entry.get("Put") {
            (
                &put["TableName"],
                (put["Item"].clone(), Change::Put(item_values(&put["Item"]))),
            )
        } else if let Some(update) = entry.get("Update") {
            (
                &update["TableName"],
                (update["Key"].clone(), parse_update(update)),
            )
        } else {
            continue;
        };
        by_table
            .entry(table.as_str().unwrap_or_default().to_owned())
            .or_default()
            .push(item);
    }
    by_table
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_adapter_update_expression_reads_as_its_sets_and_removes() {
        let request = json!({
            "UpdateExpression": "SET #state = :held, job_id = :job, note = if_not_exists(note, :n) REMOVE free_key",
            "ExpressionAttributeNames": {"#state": "state"},
            "ExpressionAttributeValues": {":held": {"S": "HELD"}, ":job": {"S": "j1"}, ":n": {"S": "x"}},
        });
        let Change::Update { set, remove } = parse_update(&request) else {
            panic!("an update")
        };
        let names: Vec<&str> = set.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names, ["state", "job_id", "note"]);
        assert!(matches!(&set[0].1, Operand::Value(v) if v == "HELD"));
        assert!(matches!(&set[2].1, Operand::Other));
        assert_eq!(remove, ["free_key"]);
    }

    #[test]
    fn a_copy_from_another_attribute_is_followed() {
        let request =
            json!({"UpdateExpression": "SET free_key = free_home REMOVE job_id, hold_until"});
        let Change::Update { set, remove } = parse_update(&request) else {
            panic!("an update")
        };
        assert!(matches!(&set[0].1, Operand::Copy(source) if source == "free_home"));
        assert_eq!(remove, ["job_id", "hold_until"]);
    }
}
