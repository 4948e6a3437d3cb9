//! A fuzz input read as a stream of decisions, the same way by the libFuzzer targets and by the
//! stable smoke tests: every read is defined on every input (an exhausted input reads as
//! zeros), so any byte string is a valid input and a short one is a simple one.

/// Bytes consumed front to back.
pub struct Input<'a> {
    data: &'a [u8],
}

impl<'a> Input<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Input { data }
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    pub fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((first, rest)) => {
                self.data = rest;
                *first
            }
            None => 0,
        }
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        let value = u16::from_le_bytes([self.byte(), self.byte()]) as usize;
        value % n
    }

    pub fn flag(&mut self) -> bool {
        self.byte() & 1 == 1
    }

    pub fn pick<'t, T>(&mut self, items: &'t [T]) -> &'t T {
        &items[self.below(items.len())]
    }

    /// Up to `max` bytes of text (lossy UTF-8), length first.
    pub fn text(&mut self, max: usize) -> String {
        let len = self.below(max + 1).min(self.data.len());
        let (head, rest) = self.data.split_at(len);
        self.data = rest;
        String::from_utf8_lossy(head).into_owned()
    }

    /// Everything not read yet.
    pub fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.data)
    }
}

/// Cuts `data` at its first NUL: (the file, the decisions). No NUL: all of it is the file.
pub fn split_at_nul(data: &[u8]) -> (&[u8], &[u8]) {
    match data.iter().position(|&b| b == 0) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[]),
    }
}

/// xorshift64*: the smoke tests' generator, fixed seeds so that a failure reproduces.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// `len` random bytes.
    pub fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next_u64() as u8).collect()
    }

    /// A libFuzzer-like mutation of `seed`: byte flips, inserts, deletes, splices of itself.
    pub fn mutate(&mut self, seed: &[u8]) -> Vec<u8> {
        let mut out = seed.to_vec();
        for _ in 0..=self.below(8) {
            let at = self.below(out.len() + 1);
            match self.below(5) {
                0 if !out.is_empty() => {
                    let i = self.below(out.len());
                    out[i] ^= 1 << self.below(8);
                }
                1 => out.insert(at, self.next_u64() as u8),
                2 if at < out.len() => {
                    out.remove(at);
                }
                3 if !out.is_empty() => {
                    let from = self.below(out.len());
                    let len = self.below(out.len() - from + 1).min(64);
                    let chunk = out[from..from + len].to_vec();
                    out.splice(at..at, chunk);
                }
                _ => out.insert(at, *b"\n !\0\r\t#-".get(self.below(9)).unwrap_or(&b'\n')),
            }
        }
        out
    }
}

/// How many generated inputs a smoke test runs: `DEEVNET_FUZZ_CASES`, else `default`.
pub fn case_count(default: usize) -> usize {
    std::env::var("DEEVNET_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The stable smoke run of one target: every file of `fuzz/corpus/TARGET` and
/// `fuzz/regressions/TARGET` (crashes found by `make fuzz`, kept for good), then `cases`
/// generated inputs (random bytes, and mutations of the corpus), all through `check`.
/// `fuzz_root` is the `fuzz/` folder. Returns how many inputs ran.
pub fn smoke(
    fuzz_root: &std::path::Path,
    target: &str,
    cases: usize,
    check: impl Fn(&[u8]),
) -> usize {
    let mut seeds: Vec<(String, Vec<u8>)> = Vec::new();
    for folder in ["corpus", "regressions"] {
        let Ok(entries) = std::fs::read_dir(fuzz_root.join(folder).join(target)) else {
            continue;
        };
        for entry in entries.flatten() {
            let data = std::fs::read(entry.path()).expect("a corpus file is readable");
            seeds.push((entry.path().display().to_string(), data));
        }
    }
    seeds.sort();
    assert!(
        !seeds.is_empty(),
        "no corpus for {target} under {}",
        fuzz_root.display()
    );
    for (name, data) in &seeds {
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(data)));
        assert!(
            outcome.is_ok(),
            "{target}: the corpus file {name} breaks an invariant"
        );
    }
    let mut rng = Rng(0x5eed_0000 ^ target.len() as u64 ^ (cases as u64) << 20);
    for case in 0..cases {
        let data = if case.is_multiple_of(2) {
            let len = rng.below(200);
            rng.bytes(len)
        } else {
            let seed = &seeds[rng.below(seeds.len())].1;
            rng.mutate(seed)
        };
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(&data)));
        assert!(
            outcome.is_ok(),
            "{target}: generated case {case} breaks an invariant; input (hex): {}",
            data.iter().map(|b| format!("{b:02x}")).collect::<String>()
        );
    }
    seeds.len() + cases
}
