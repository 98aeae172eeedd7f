//! The ledger: every DynamoDB request the real adapters send, booked by table or index and
//! partition-key value, in the capacity units DynamoDB Local reports for it
//! (`ReturnConsumedCapacity: INDEXES`). An index's units are booked to the index keys the write
//! touched, found from a shadow of each item's index-key attributes (every write since the
//! event was created passes through here, so the shadow knows an item's old keys).

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

use seatclaim_e2e::request_log::Observer;
use serde_json::Value;

use crate::expressions::{
    Change, Operand, consumed_for, item_values, parse_update, query_key, text, transaction_items,
};

/// One table's key attributes and its indexes' partition-key attributes.
#[derive(Debug, Clone)]
pub struct TableKeys {
    /// The table's short label (the name without the prefix).
    pub label: String,
    /// The partition key attribute.
    pub hash: String,
    /// The sort key attribute, if any.
    pub range: Option<String>,
    /// (index name, its partition key attribute).
    pub indexes: Vec<(String, String)>,
}

impl TableKeys {
    /// Attributes whose values the shadow keeps: the index keys, and `free_home` (the value a
    /// release copies into `free_key`).
    fn tracked(&self, attribute: &str) -> bool {
        attribute == "free_home" || self.indexes.iter().any(|(_, key)| key == attribute)
    }
}

/// Read and write units booked to one partition key.
#[derive(Debug, Clone, Copy, Default)]
pub struct Usage {
    /// Read units.
    pub reads: f64,
    /// Write units.
    pub writes: f64,
}

#[derive(Default)]
struct Books {
    usage: HashMap<(String, String), Usage>,
    shadow: HashMap<(String, String), HashMap<String, String>>,
    requests: u64,
}

/// The ledger (an [`Observer`] of the counting proxy).
pub struct Ledger {
    tables: HashMap<String, TableKeys>,
    books: Mutex<Books>,
}

impl Ledger {
    /// A ledger for these tables, by table name.
    pub fn new(tables: HashMap<String, TableKeys>) -> Self {
        Self {
            tables,
            books: Mutex::new(Books::default()),
        }
    }

    /// The units booked so far by (label, key), and the DynamoDB requests; the counters start
    /// again from zero (the shadow stays).
    pub fn take(&self) -> (HashMap<(String, String), Usage>, u64) {
        let mut books = self.books.lock().expect("ledger lock");
        let requests = std::mem::take(&mut books.requests);
        (std::mem::take(&mut books.usage), requests)
    }

    fn book(books: &mut Books, label: &str, key: &str, reads: f64, writes: f64) {
        let usage = books
            .usage
            .entry((label.to_owned(), key.to_owned()))
            .or_default();
        usage.reads += reads;
        usage.writes += writes;
    }

    /// Books a read of `keys` (partition-key values) of `table` or of its `index`.
    fn read(
        &self,
        books: &mut Books,
        table: &str,
        index: Option<&str>,
        keys: &[String],
        units: f64,
    ) {
        let Some(spec) = self.tables.get(table) else {
            return;
        };
        let label = index.map_or_else(|| spec.label.clone(), |i| format!("{}/{i}", spec.label));
        let share = units / keys.len().max(1) as f64;
        for key in keys {
            Self::book(books, &label, key, share, 0.0);
        }
    }
}

impl Ledger {
    fn item_key(&self, table: &str, key_or_item: &Value) -> Option<(String, String)> {
        let spec = self.tables.get(table)?;
        let hash = text(&key_or_item[&spec.hash])?;
        let full = match &spec.range {
            Some(range) => format!(
                "{hash}\u{1f}{}",
                text(&key_or_item[range]).unwrap_or_default()
            ),
            None => hash.clone(),
        };
        Some((hash, full))
    }

    /// Applies one item's change to the shadow; returns, per index, the index keys it wrote.
    fn apply(
        &self,
        books: &mut Books,
        table: &str,
        full_key: &str,
        change: &Change,
    ) -> Vec<(String, String)> {
        let Some(spec) = self.tables.get(table) else {
            return Vec::new();
        };
        let slot = (table.to_owned(), full_key.to_owned());
        let before = books.shadow.get(&slot).cloned().unwrap_or_default();
        let after = match change {
            Change::Put(values) => values
                .iter()
                .filter(|(name, _)| spec.tracked(name))
                .map(|(n, v)| (n.clone(), v.clone()))
                .collect(),
            Change::Delete => HashMap::new(),
            Change::Update { set, remove } => {
                let mut after = before.clone();
                for (name, operand) in set.iter().filter(|(name, _)| spec.tracked(name)) {
                    let value = match operand {
                        Operand::Value(value) => Some(value.clone()),
                        Operand::Copy(source) => before.get(source).cloned(),
                        Operand::Other => None,
                    };
                    match value {
                        Some(value) => after.insert(name.clone(), value),
                        None => after.remove(name),
                    };
                }
                for name in remove {
                    after.remove(name);
                }
                after
            }
        };
        let mut touched = Vec::new();
        for (index, attribute) in &spec.indexes {
            let keys: BTreeSet<&String> = [before.get(attribute), after.get(attribute)]
                .into_iter()
                .flatten()
                .collect();
            touched.extend(keys.into_iter().map(|key| (index.clone(), key.clone())));
        }
        books.shadow.insert(slot, after);
        touched
    }

    /// Books the writes of one table within a request.
    fn write(
        &self,
        books: &mut Books,
        table: &str,
        items: Vec<(Value, Change)>,
        consumed: Option<&Value>,
        failed_units: f64,
    ) {
        let Some(spec) = self.tables.get(table).cloned() else {
            return;
        };
        let count = items.len().max(1) as f64;
        let Some(consumed) = consumed else {
            // A refused write (a failed condition) still costs its write units on the table.
            for (key, _) in &items {
                if let Some((hash, _)) = self.item_key(table, key) {
                    Self::book(books, &spec.label, &hash, 0.0, failed_units);
                }
            }
            return;
        };
        let table_units = consumed["Table"]["CapacityUnits"].as_f64().unwrap_or(0.0);
        let mut index_keys: HashMap<String, Vec<String>> = HashMap::new();
        for (key, change) in &items {
            let Some((hash, full)) = self.item_key(table, key) else {
                continue;
            };
            Self::book(books, &spec.label, &hash, 0.0, table_units / count);
            for (index, index_key) in self.apply(books, table, &full, change) {
                index_keys.entry(index).or_default().push(index_key);
            }
        }
        for (index, keys) in index_keys {
            let units = consumed["GlobalSecondaryIndexes"][&index]["CapacityUnits"]
                .as_f64()
                .unwrap_or(0.0);
            let share = units / keys.len().max(1) as f64;
            for key in keys {
                Self::book(books, &format!("{}/{index}", spec.label), &key, 0.0, share);
            }
        }
    }
}

impl Ledger {
    /// Books a read request. DynamoDB charges a read that finds nothing (a `GetItem` of a
    /// missing item, a `Query` of an empty partition) its minimum, half a unit eventually
    /// consistent and one strongly; DynamoDB Local reports 0 for it, so the minimum is booked.
    fn book_read(&self, books: &mut Books, op: &str, request: &Value, answer: &Value) {
        let table = request["TableName"].as_str().unwrap_or_default();
        let least = if request["ConsistentRead"].as_bool() == Some(true) {
            1.0
        } else {
            0.5
        };
        let table_units = |table: &str| {
            consumed_for(answer, table)
                .and_then(|c| {
                    c["Table"]["CapacityUnits"]
                        .as_f64()
                        .or(c["CapacityUnits"].as_f64())
                })
                .unwrap_or(0.0)
                .max(if op == "BatchGetItem" { 0.0 } else { least })
        };
        match op {
            "GetItem" => {
                let key: Vec<String> = self
                    .item_key(table, &request["Key"])
                    .map(|k| k.0)
                    .into_iter()
                    .collect();
                self.read(books, table, None, &key, table_units(table));
            }
            "Query" => {
                let index = request["IndexName"].as_str();
                let units = match index {
                    Some(index) => consumed_for(answer, table)
                        .and_then(|c| c["GlobalSecondaryIndexes"][index]["CapacityUnits"].as_f64())
                        .unwrap_or(0.0)
                        .max(0.5),
                    None => table_units(table),
                };
                let key: Vec<String> = query_key(request).into_iter().collect();
                self.read(books, table, index, &key, units);
            }
            _ => {
                for (table, wanted) in request["RequestItems"].as_object().into_iter().flatten() {
                    let keys: Vec<String> = wanted["Keys"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|key| self.item_key(table, key).map(|k| k.0))
                        .collect();
                    self.read(books, table, None, &keys, table_units(table));
                }
            }
        }
    }

    /// Books a write request; a refused one (`ok` false) costs its table's units only.
    fn book_write(&self, books: &mut Books, op: &str, request: &Value, answer: &Value, ok: bool) {
        let table = request["TableName"].as_str().unwrap_or_default();
        let consumed = |table: &str| ok.then(|| consumed_for(answer, table)).flatten();
        match op {
            "PutItem" => {
                let item = request["Item"].clone();
                let change = Change::Put(item_values(&item));
                self.write(books, table, vec![(item, change)], consumed(table), 1.0);
            }
            "UpdateItem" | "DeleteItem" => {
                let change = if op == "UpdateItem" {
                    parse_update(request)
                } else {
                    Change::Delete
                };
                self.write(
                    books,
                    table,
                    vec![(request["Key"].clone(), change)],
                    consumed(table),
                    1.0,
                );
            }
            "BatchWriteItem" => {
                for (table, writes) in request["RequestItems"].as_object().into_iter().flatten() {
                    let items = writes
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|write| match write.get("PutRequest") {
                            Some(put) => {
                                (put["Item"].clone(), Change::Put(item_values(&put["Item"])))
                            }
                            None => (write["DeleteRequest"]["Key"].clone(), Change::Delete),
                        })
                        .collect();
                    self.write(books, table, items, consumed_for(answer, table), 1.0);
                }
            }
            _ => {
                for (table, items) in transaction_items(request) {
                    self.write(books, &table, items, consumed(&table), 2.0);
                }
            }
        }
    }
}

impl Observer for Ledger {
    fn observe(&self, operation: &str, request: &[u8], status: u16, answer: &[u8]) {
        let Some(op) = operation.strip_prefix("DynamoDB.") else {
            return;
        };
        let Ok(request) = serde_json::from_slice::<Value>(request) else {
            return;
        };
        let answer = serde_json::from_slice::<Value>(answer).unwrap_or(Value::Null);
        let mut books = self.books.lock().expect("ledger lock");
        books.requests += 1;
        match op {
            "GetItem" | "Query" | "BatchGetItem" => {
                self.book_read(&mut books, op, &request, &answer)
            }
            "PutItem" | "UpdateItem" | "DeleteItem" | "BatchWriteItem" | "TransactWriteItems" => {
                self.book_write(&mut books, op, &request, &answer, status < 300);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn seats() -> Ledger {
        let keys = TableKeys {
            label: "inventory".into(),
            hash: "seat_key".into(),
            range: None,
            indexes: vec![("free-by-section".into(), "free_key".into())],
        };
        Ledger::new(HashMap::from([("p-inventory".to_owned(), keys)]))
    }

    fn update(ledger: &Ledger, expression: &str, values: serde_json::Value, index_units: f64) {
        let request = json!({"TableName": "p-inventory", "Key": {"seat_key": {"S": "e#A-1-1"}},
                             "UpdateExpression": expression, "ExpressionAttributeValues": values});
        let answer = json!({"ConsumedCapacity": {"TableName": "p-inventory", "Table": {"CapacityUnits": 1.0},
                            "GlobalSecondaryIndexes": {"free-by-section": {"CapacityUnits": index_units}}}});
        let (request, answer) = (request.to_string(), answer.to_string());
        ledger.observe(
            "DynamoDB.UpdateItem",
            request.as_bytes(),
            200,
            answer.as_bytes(),
        );
    }

    #[test]
    fn index_writes_are_booked_to_the_keys_the_item_left_and_entered() {
        let ledger = seats();
        let put = json!({"TableName": "p-inventory", "Item": {"seat_key": {"S": "e#A-1-1"},
                         "free_key": {"S": "e#A#0"}, "free_home": {"S": "e#A#0"}}});
        let answer = json!({"ConsumedCapacity": {"TableName": "p-inventory", "Table": {"CapacityUnits": 1.0},
                            "GlobalSecondaryIndexes": {"free-by-section": {"CapacityUnits": 1.0}}}});
        let (put, answer) = (put.to_string(), answer.to_string());
        ledger.observe("DynamoDB.PutItem", put.as_bytes(), 200, answer.as_bytes());
        // A hold removes the index key: the write lands on the key the seat had.
        update(
            &ledger,
            "SET job_id = :j REMOVE free_key",
            json!({":j": {"S": "j"}}),
            1.0,
        );
        // A release copies free_home back: the write lands on that key.
        update(
            &ledger,
            "SET free_key = free_home REMOVE job_id",
            json!({}),
            1.0,
        );
        let (usage, requests) = ledger.take();
        assert_eq!(requests, 3);
        let index = &usage[&("inventory/free-by-section".to_owned(), "e#A#0".to_owned())];
        assert!((index.writes - 3.0).abs() < 1e-9, "{index:?}");
        let table = &usage[&("inventory".to_owned(), "e#A-1-1".to_owned())];
        assert!((table.writes - 3.0).abs() < 1e-9, "{table:?}");
    }

    #[test]
    fn a_read_that_finds_nothing_costs_dynamodbs_minimum() {
        let ledger = seats();
        let empty = json!({"ConsumedCapacity": {"TableName": "p-inventory", "CapacityUnits": 0.0}})
            .to_string();
        for (consistent, key) in [(true, "strong"), (false, "eventual")] {
            let query = json!({"TableName": "p-inventory", "ConsistentRead": consistent,
                               "KeyConditionExpression": "seat_key = :k",
                               "ExpressionAttributeValues": {":k": {"S": key}}})
            .to_string();
            ledger.observe("DynamoDB.Query", query.as_bytes(), 200, empty.as_bytes());
        }
        let (usage, _) = ledger.take();
        let reads = |key: &str| usage[&("inventory".to_owned(), key.to_owned())].reads;
        assert!((reads("strong") - 1.0).abs() < 1e-9);
        assert!((reads("eventual") - 0.5).abs() < 1e-9);
    }

    #[test]
    fn a_refused_conditional_write_still_costs_its_table_units() {
        let ledger = seats();
        let request = json!({"TableName": "p-inventory", "Key": {"seat_key": {"S": "e#A-1-1"}},
                             "UpdateExpression": "SET a = :a", "ExpressionAttributeValues": {":a": {"S": "x"}}})
        .to_string();
        ledger.observe("DynamoDB.UpdateItem", request.as_bytes(), 400, b"{}");
        let (usage, _) = ledger.take();
        assert!((usage[&("inventory".to_owned(), "e#A-1-1".to_owned())].writes - 1.0).abs() < 1e-9);
    }
}
