//! `frr.conf.local` read as a tree of contexts by `frr-reload.py`'s rules (spec A.3), with
//! every node remembering which source lines it spans, so that a file can be written back
//! with the unmanaged parts untouched, byte for byte.
//!
//! One deliberate difference from `load_contexts`: `frr-reload.py` relies on `vtysh -m` to
//! insert the `exit`s that close a context left open before the next header; without vtysh,
//! this parser does the same by walking up the keyword levels when a line opens a context of
//! an enclosing level (so `vrf A` without `exit` followed by `vrf B` gives two stanzas).

use crate::grammar::{self, Keyword};

/// One line of the source, without its line ending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceLine<'a> {
    pub text: &'a str,
    /// `"\n"`, `"\r\n"` or `""` for a last line without one.
    pub ending: &'a str,
}

impl SourceLine<'_> {
    pub fn is_blank(&self) -> bool {
        self.text.trim().is_empty()
    }
    /// A comment to FRR: `!` or `#` first (frr-reload skips both).
    pub fn is_comment(&self) -> bool {
        let t = self.text.trim_start();
        t.starts_with('!') || t.starts_with('#')
    }
}

pub fn split_lines(source: &str) -> Vec<SourceLine<'_>> {
    source
        .split_inclusive('\n')
        .map(|chunk| {
            let (text, ending) = match chunk.strip_suffix("\r\n") {
                Some(text) => (text, "\r\n"),
                None => match chunk.strip_suffix('\n') {
                    Some(text) => (text, "\n"),
                    None => (chunk, ""),
                },
            };
            SourceLine { text, ending }
        })
        .collect()
}

/// A line of a context's body: a command or a comment inside the context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BodyLine {
    /// 0-based index into the file's lines.
    pub index: usize,
    /// Normalised as frr-reload does (comments: trimmed only).
    pub text: String,
    pub comment: bool,
}

/// A context: a header with its body, nested contexts and terminator. One-line contexts
/// (`ip prefix-list …`) have neither body nor terminator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Context {
    /// The header, normalised.
    pub header: String,
    pub header_index: usize,
    pub body: Vec<BodyLine>,
    pub children: Vec<Context>,
    /// The `exit…` line that closed it, when one did.
    pub terminator: Option<usize>,
    /// The last line that belongs to it (its terminator, or its last body or child line).
    pub last_index: usize,
    /// Whether it opens a block (a `ctx_keywords` header) rather than being one line.
    pub is_block: bool,
}

impl Context {
    pub fn commands(&self) -> impl Iterator<Item = &str> {
        self.body
            .iter()
            .filter(|l| !l.comment)
            .map(|l| l.text.as_str())
    }
}

/// A top-level item of the file, in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    Stanza(Context),
    /// A line outside every context: blank, comment, a stray `exit` or `end`.
    Loose(usize),
}

/// The parsed file: its lines and its top-level items, which together cover every line once,
/// in order.
#[derive(Debug)]
pub struct ConfigFile<'a> {
    pub lines: Vec<SourceLine<'a>>,
    pub items: Vec<Item>,
}

struct Open {
    context: Context,
    keywords: &'static [Keyword],
}

pub fn parse(source: &str) -> ConfigFile<'_> {
    let lines = split_lines(source);
    let mut items = Vec::new();
    let mut stack: Vec<Open> = Vec::new();
    // Blank and comment lines seen since the last command: they belong to the context that is
    // still open only if another line of that context follows.
    let mut pending: Vec<usize> = Vec::new();

    for (index, line) in lines.iter().enumerate() {
        if line.is_blank() || line.is_comment() {
            pending.push(index);
            continue;
        }
        let text = grammar::normalise(line.text);
        if text.starts_with("exit") {
            match stack.pop() {
                Some(mut open) => {
                    adopt_pending(&mut open.context, &mut pending, &lines);
                    open.context.terminator = Some(index);
                    open.context.last_index = index;
                    close(open.context, &mut stack, &mut items);
                }
                None => {
                    flush_loose(&mut pending, &mut items);
                    items.push(Item::Loose(index));
                }
            }
            continue;
        }
        if text == "end" {
            close_all(&mut stack, &mut items);
            flush_loose(&mut pending, &mut items);
            items.push(Item::Loose(index));
            continue;
        }
        // Which level, from the innermost outwards, has a keyword this line opens?
        let levels = stack.len();
        let opened = (0..=levels).rev().find_map(|depth| {
            let keywords = if depth == 0 {
                grammar::TOP_LEVEL
            } else {
                stack[depth - 1].keywords
            };
            grammar::opening_keyword(keywords, &text).map(|k| (depth, k))
        });
        match opened {
            Some((depth, keyword)) => {
                while stack.len() > depth {
                    if let Some(open) = stack.pop() {
                        close(open.context, &mut stack, &mut items);
                    }
                }
                if let Some(parent) = stack.last_mut() {
                    adopt_pending(&mut parent.context, &mut pending, &lines);
                } else {
                    flush_loose(&mut pending, &mut items);
                }
                stack.push(Open {
                    context: new_context(text, index, true),
                    keywords: keyword.children,
                });
            }
            None => match stack.last_mut() {
                Some(open) => {
                    adopt_pending(&mut open.context, &mut pending, &lines);
                    open.context.body.push(BodyLine {
                        index,
                        text,
                        comment: false,
                    });
                    open.context.last_index = index;
                }
                None => {
                    flush_loose(&mut pending, &mut items);
                    items.push(Item::Stanza(new_context(text, index, false)));
                }
            },
        }
    }
    close_all(&mut stack, &mut items);
    flush_loose(&mut pending, &mut items);
    ConfigFile { lines, items }
}

fn new_context(header: String, index: usize, is_block: bool) -> Context {
    Context {
        header,
        header_index: index,
        body: Vec::new(),
        children: Vec::new(),
        terminator: None,
        last_index: index,
        is_block,
    }
}

/// Comments between two lines of one context are part of it (kept by a merge-mode rewrite).
fn adopt_pending(context: &mut Context, pending: &mut Vec<usize>, lines: &[SourceLine]) {
    for index in pending.drain(..) {
        if !lines[index].is_blank() {
            context.body.push(BodyLine {
                index,
                text: lines[index].text.trim().to_string(),
                comment: true,
            });
        }
        context.last_index = index;
    }
}

fn flush_loose(pending: &mut Vec<usize>, items: &mut Vec<Item>) {
    items.extend(pending.drain(..).map(Item::Loose));
}

fn close(context: Context, stack: &mut [Open], items: &mut Vec<Item>) {
    match stack.last_mut() {
        Some(parent) => {
            parent.context.last_index = parent.context.last_index.max(context.last_index);
            parent.context.children.push(context);
        }
        None => items.push(Item::Stanza(context)),
    }
}

fn close_all(stack: &mut Vec<Open>, items: &mut Vec<Item>) {
    while let Some(open) = stack.pop() {
        close(open.context, stack, items);
    }
}

impl ConfigFile<'_> {
    /// The text of lines `first..=last`, with their endings, as in the source.
    pub fn text_of(&self, first: usize, last: usize) -> String {
        self.lines[first..=last]
            .iter()
            .map(|l| format!("{}{}", l.text, l.ending))
            .collect()
    }

    pub fn stanzas(&self) -> impl Iterator<Item = &Context> {
        self.items.iter().filter_map(|item| match item {
            Item::Stanza(context) => Some(context),
            Item::Loose(_) => None,
        })
    }
}
