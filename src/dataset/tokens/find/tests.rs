use super::*;
use crate::dataset::{Language, SourceFile};

fn file(language: Language, rel: &str, text: &str) -> SourceFile {
    SourceFile {
        repo: "r".into(),
        rel: rel.into(),
        language,
        hash: "sha256:0".into(),
        text: text.into(),
        notes: Vec::new(),
    }
}

/// `text kind line:column [trigger]` of each token, in order.
fn found(language: Language, rel: &str, text: &str) -> Vec<String> {
    find_tokens(&file(language, rel, text))
        .expect("a grammar")
        .iter()
        .map(|t| {
            let trigger = t.trigger.map(|c| format!(" {c}")).unwrap_or_default();
            format!(
                "{} {} {}:{}{trigger}",
                t.text,
                t.kind.as_str(),
                t.line,
                t.column
            )
        })
        .collect()
}

fn check(language: Language, rel: &str, text: &str, want: &[&str]) {
    assert_eq!(found(language, rel, text), want, "{rel}");
}

#[test]
#[ignore = "prints a parse tree and its tokens: TYPIST_TS_LANG=python TYPIST_TS_FILE=x.py \
            [TYPIST_TS_QUERY=q.scm]"]
fn show() {
    let lang: Language = serde_json::from_value(serde_json::Value::String(
        std::env::var("TYPIST_TS_LANG").unwrap(),
    ))
    .unwrap();
    let path = std::env::var("TYPIST_TS_FILE").unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let f = file(lang, &path, &text);
    let which = grammar::which(lang, &path).unwrap();
    let owned = std::env::var("TYPIST_TS_QUERY")
        .ok()
        .map(|q| which.build_from(&std::fs::read_to_string(q).unwrap()));
    let reader = owned.as_ref().unwrap_or_else(|| which.reader());
    let mut p = Parser::new();
    p.set_language(&reader.grammar).unwrap();
    let tree = p.parse(&text, None).unwrap();
    println!("{}", tree.root_node().to_sexp());
    for t in read(reader, &f) {
        println!(
            "{} {} {}:{} {:?}",
            t.text,
            t.kind.as_str(),
            t.line,
            t.column,
            t.trigger
        );
    }
}

#[test]
fn every_query_compiles_and_knows_its_captures() {
    for w in grammar::ALL {
        let r = w.reader();
        assert!(!r.roles.is_empty(), "{w:?}");
    }
}

// Each snippet holds keywords, literals, strings, comments and definitions: none of
// them is in the expected list, which is the whole list of tokens.

#[test]
fn python() {
    let src = r#"import os.path as osp
from .util import helper as h
class Foo(Base):
    def bar(self, x: int, *args, y=3) -> "Foo":
        self.total = x + len(args)  # note
        z = os.sep.join(f"{abc}")
        return Foo(y=z) if True else None
def baz(v: str | None) -> A | B: pass
"#;
    #[rustfmt::skip]
    let want = [
        "os import 1:7", "path import 1:10 .",
        "util import 2:6 .", "helper import 2:18",
        "Base type 3:10",
        "int type 4:21",
        "self name 5:8", "x name 5:21", "len call 5:25", "args name 5:29",
        "os name 6:12", "sep member 6:15 .", "join call 6:19 .",
        "Foo call 7:15", "z name 7:21",
        "str type 8:11", "A type 8:26", "B type 8:30",
    ];
    check(Language::Python, "a.py", src, &want);
}

#[test]
fn javascript_and_jsx() {
    let src = r#"import def, { parse as p, valid } from './util.js'
class Range extends Base {
  constructor (range, opts) {
    this.set = range.split(/\s+/).map(r => r.trim())
    return new Comparator(opts?.loose, `${range}`, ...rest) // done
  }
}
const el = <Item key={id} />
"#;
    #[rustfmt::skip]
    let want = [
        "parse import 1:14", "valid import 1:26",
        "Base type 2:20",
        "range name 4:15", "split call 4:21 .", "map call 4:34 .", "r name 4:43",
        "trim call 4:45 .",
        "Comparator type 5:15", "opts name 5:26", "loose member 5:32 .", "rest name 5:54",
        "id name 8:22",
    ];
    check(Language::JavaScript, "a.jsx", src, &want);
}

#[test]
fn typescript_and_tsx() {
    let src = r#"import { Foo } from "./foo";
interface Shape<T> { area(): number }
class Circle extends Parent implements Shape<Foo> {
  constructor(private r: number) { super(); }
  area(): number { return Math.PI * this.r; }
}
let v: ns.Kind = new Circle(1).area() as Alias;
"#;
    #[rustfmt::skip]
    let want = [
        "Foo import 1:9",
        "Parent type 3:21", "Shape type 3:39", "Foo type 3:45",
        "Math name 5:26", "PI member 5:31 .", "r member 5:41 .",
        "ns name 7:7", "Kind type 7:10 .", "Circle type 7:21", "area call 7:31 .",
        "Alias type 7:41",
    ];
    check(Language::TypeScript, "a.ts", src, &want);
    let tsx = "const App = (p: Props) => <Layout title={p.title}><b>{x}</b></Layout>;\n";
    #[rustfmt::skip]
    let want = ["Props type 1:16", "p name 1:41", "title member 1:43 .", "x name 1:54"];
    check(Language::TypeScript, "a.tsx", tsx, &want);
}

#[test]
fn java() {
    let src = r#"package com.example;
import java.util.List;
class Main<T> extends Base {
    private List<String> names = new ArrayList<>();
    void run(int count) {
        for (var n : names) { System.out.println(n.length() + max(count, 1) + "s"); }
        names.forEach(Main::show);
    }
}
"#;
    #[rustfmt::skip]
    let want = [
        "java import 2:7", "util import 2:12 .", "List import 2:17 .",
        "Base type 3:22",
        "List type 4:12", "String type 4:17", "ArrayList type 4:37",
        "names name 6:21", "System name 6:30", "out member 6:37 .", "println call 6:41 .",
        "n name 6:49", "length call 6:51 .", "max call 6:62", "count name 6:66",
        "names name 7:8", "forEach call 7:14 .", "Main name 7:22", "show member 7:28 :",
    ];
    check(Language::Java, "A.java", src, &want);
}

#[test]
fn go() {
    let src = r#"package main

import str "strings"

func (p *Point) Scale(k float64, rest ...string) (out Point) {
	q := Point{X: p.X}
	for i, s := range rest {
		fmt.Println(i, str.ToUpper(s), q.Y, "x", nil)
	}
	return *p
}
"#;
    #[rustfmt::skip]
    let want = [
        "Point type 5:9", "float64 type 5:24", "string type 5:41", "Point type 5:54",
        "Point type 6:6", "X name 6:12", "p name 6:15", "X member 6:17 .",
        "rest name 7:19",
        "fmt name 8:2", "Println call 8:6 .", "i name 8:14", "str name 8:17",
        "ToUpper call 8:21 .", "s name 8:29", "q name 8:33", "Y member 8:35 .",
        "p name 10:9",
    ];
    check(Language::Go, "a.go", src, &want);
}

#[test]
fn rust() {
    let src = r#"use std::collections::{HashMap, BTreeMap as Tree};
#[derive(Debug)]
struct Point<T> { x: T }
impl<T> Point<T> {
    fn new(x: T) -> Self { Point { x } }
    fn sum(&self, items: &[i32]) -> Option<i32> {
        for (i, v) in items.iter().enumerate() { println!("{}", v); }
        let total = 0..items.len();
        Some(i32::MAX)
    }
}
"#;
    #[rustfmt::skip]
    let want = [
        "std import 1:4", "collections import 1:9 :", "HashMap import 1:23",
        "BTreeMap import 1:32",
        "T type 3:21",
        "Point type 4:8", "T type 4:14",
        "T type 5:14", "Point type 5:27", "x name 5:35",
        "Option type 6:36",
        "items name 7:22", "iter call 7:28 .", "enumerate call 7:35 .", "println call 7:49",
        "items name 8:23", "len call 8:29 .",
        "Some call 9:8", "i32 name 9:13", "MAX member 9:18 :",
    ];
    check(Language::Rust, "a.rs", src, &want);
}

#[test]
fn c() {
    let src = r#"#include <stdio.h>
#define LIMIT 10
typedef struct node { int value; struct node *next; } node_t;
static int count(const node_t *head, size_t limit) {
    struct point pt = { .x = 1 };
    for (const node_t *it = head; it; it = it->next) { printf("%d", it->value + pt.x); }
    return LIMIT + (int)limit; /* done */
}
"#;
    #[rustfmt::skip]
    let want = [
        "node type 3:40",
        "node_t type 4:23", "size_t type 4:37",
        "point type 5:11", "x member 5:25 .",
        "node_t type 6:15", "head name 6:28", "it name 6:34", "it name 6:38", "it name 6:43",
        "next member 6:47 >", "printf call 6:55", "it name 6:68", "value member 6:72 >",
        "pt name 6:80", "x member 6:83 .",
        "LIMIT name 7:11", "limit name 7:24",
    ];
    check(Language::C, "a.c", src, &want);
}

#[test]
fn cpp() {
    let src = r#"using std::string;
template <typename T>
class Box : public Base<T> {
    explicit Box(T v) : value_(v) {}
};
int Box<int>::count(const string &name) {
    for (auto &item : items) { item += std::max<int>(1, name.size()); }
    return this->items.size() + std::string::npos;
}
void g() { a::B::f(1); }
"#;
    #[rustfmt::skip]
    let want = [
        "std import 1:6", "string import 1:11 :",
        "Base type 3:19", "T type 3:24",
        "T type 4:17", "v name 4:31",
        "Box type 6:4", "string type 6:26",
        "items name 7:22", "item name 7:31", "std name 7:39", "max call 7:44 :",
        "name name 7:56", "size call 7:61 .",
        "items member 8:17 >", "size call 8:23 .", "std name 8:32", "string member 8:37 :",
        "npos member 8:45 :",
        "a name 10:11", "B member 10:14 :", "f call 10:17 :",
    ];
    check(Language::Cpp, "a.cpp", src, &want);
}

#[test]
fn columns_count_characters_and_languages_without_a_grammar_give_none() {
    let src = "s = \"é€\"; t = s.upper()\n";
    check(
        Language::Python,
        "u.py",
        src,
        &["s name 1:14", "upper call 1:16 ."],
    );
    let kt = file(Language::Kotlin, "a.kt", "fun main() { println(1) }\n");
    assert_eq!(find_tokens(&kt), None);
    assert!(!has_grammar(&kt));
}

#[test]
fn trigger_characters() {
    assert_eq!(trigger_before("a."), Some('.'));
    assert_eq!(trigger_before("a?."), Some('.'));
    assert_eq!(trigger_before("a::"), Some(':'));
    assert_eq!(trigger_before("p->"), Some('>'));
    assert_eq!(trigger_before("x: "), None);
    assert_eq!(trigger_before("x:"), None);
    assert_eq!(trigger_before("a > "), None);
    assert_eq!(trigger_before("a>"), None);
    assert_eq!(trigger_before("f(..."), None);
    assert_eq!(trigger_before("0.."), None);
    assert_eq!(trigger_before(""), None);
}
