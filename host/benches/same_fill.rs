//! `cargo bench`: nanoseconds per 4 KiB page for the same-element scan and the fill, beside a
//! plain word loop written the way C zram's `page_same_filled()` and a `for` fill are. A
//! measurement printed as a table, not a test: nothing here passes or fails.
//!
//! With `ZRAM_RS_COUNT=<case>` it instead runs one routine `COUNT_ROUNDS` times and exits, for
//! `valgrind --tool=callgrind` to count instructions (`scripts/bench.sh` does this); the case
//! `none` runs the same set-up with no routine, as the baseline.

use std::hint::black_box;
use std::time::Instant;
use zram_rs_logic::fill::fill;
use zram_rs_logic::same::same_filled;

const PAGE: usize = 4096;
const WORDS: usize = PAGE / 8;

#[repr(C, align(4096))]
struct Page([u64; WORDS]);

impl Page {
    fn bytes(&self) -> &[u8] {
        // The array is plain old data; viewing it as bytes is what the kernel's mapping does.
        unsafe { std::slice::from_raw_parts(self.0.as_ptr().cast(), PAGE) }
    }
    fn bytes_mut(&mut self) -> &mut [u8] {
        unsafe { std::slice::from_raw_parts_mut(self.0.as_mut_ptr().cast(), PAGE) }
    }
}

/// C zram's `page_same_filled()`: last word first, then one word at a time.
#[inline(never)]
fn c_style_scan(page: &[u64; WORDS]) -> Option<u64> {
    let first = page[0];
    if first != page[WORDS - 1] {
        return None;
    }
    for &word in &page[1..WORDS - 1] {
        if word != first {
            return None;
        }
    }
    Some(first)
}

/// A plain word loop fill.
#[inline(never)]
fn naive_fill(page: &mut [u64; WORDS], word: u64) {
    for slot in page.iter_mut() {
        // Volatile so the compiler keeps the loop a loop, as `memset_l`'s generic C is.
        unsafe { std::ptr::write_volatile(slot, word) };
    }
}

fn time_per_page(iterations: u32, mut f: impl FnMut()) -> f64 {
    for _ in 0..iterations / 10 {
        f();
    }
    let start = Instant::now();
    for _ in 0..iterations {
        f();
    }
    start.elapsed().as_nanos() as f64 / f64::from(iterations)
}

/// Rounds per case in counting mode.
const COUNT_ROUNDS: u32 = 1000;

fn count_mode(case: &str, pages: &[(&str, &Page)], target: &mut Page) {
    for _ in 0..COUNT_ROUNDS {
        match case {
            "none" => {}
            "fill-ours" => fill(
                black_box(target.bytes_mut()),
                0,
                black_box(0xdead_beef_cafe_f00d),
            ),
            "fill-loop" => naive_fill(black_box(&mut target.0), black_box(0xdead_beef_cafe_f00d)),
            _ => {
                let (kind, which) = case.split_once(':').unwrap_or((case, ""));
                let page = pages
                    .iter()
                    .find(|(name, _)| *name == which)
                    .map(|(_, p)| *p);
                let Some(page) = page else {
                    eprintln!("unknown case {case}");
                    std::process::exit(2);
                };
                match kind {
                    "scan-ours" => {
                        black_box(same_filled(black_box(page.bytes())));
                    }
                    "scan-loop" => {
                        black_box(c_style_scan(black_box(&page.0)));
                    }
                    _ => {
                        eprintln!("unknown case {case}");
                        std::process::exit(2);
                    }
                }
            }
        }
    }
}

fn main() {
    let iterations = 200_000;
    let zero = Box::new(Page([0; WORDS]));
    let pattern = Box::new(Page([0xdead_beef_cafe_f00d; WORDS]));
    let mut differs_at_end = Box::new(Page([0x1111; WORDS]));
    differs_at_end.0[WORDS - 1] = 2;
    let mut differs_in_middle = Box::new(Page([0x1111; WORDS]));
    differs_in_middle.0[WORDS / 2] = 2;
    let mut random = Box::new(Page([0; WORDS]));
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for word in random.0.iter_mut() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        *word = state;
    }

    if let Ok(case) = std::env::var("ZRAM_RS_COUNT") {
        let mut target = Box::new(Page([0; WORDS]));
        let pages = [
            ("same", &*pattern),
            ("middle", &*differs_in_middle),
            ("last", &*differs_at_end),
            ("random", &*random),
        ];
        count_mode(&case, &pages, &mut target);
        return;
    }

    println!("same-element scan and fill, ns per 4 KiB page ({iterations} iterations each)");
    println!(
        "{:<34} {:>10} {:>12} {:>7}",
        "case", "zram_rs", "word loop", "ratio"
    );
    let scans: [(&str, &Page); 5] = [
        ("scan: zero page", &zero),
        ("scan: 0xdeadbeefcafef00d page", &pattern),
        ("scan: differs in the middle", &differs_in_middle),
        ("scan: differs in the last word", &differs_at_end),
        ("scan: random data", &random),
    ];
    for (name, page) in scans {
        let ours = time_per_page(iterations, || {
            black_box(same_filled(black_box(page.bytes())));
        });
        let loop_ = time_per_page(iterations, || {
            black_box(c_style_scan(black_box(&page.0)));
        });
        println!(
            "{name:<34} {ours:>10.1} {loop_:>12.1} {:>7.2}",
            loop_ / ours
        );
    }
    let mut target = Box::new(Page([0; WORDS]));
    for (name, word) in [
        ("fill: zero", 0u64),
        ("fill: 0xdeadbeefcafef00d", 0xdead_beef_cafe_f00d),
    ] {
        let ours = time_per_page(iterations, || {
            fill(black_box(target.bytes_mut()), 0, black_box(word));
        });
        let loop_ = time_per_page(iterations, || {
            naive_fill(black_box(&mut target.0), black_box(word));
        });
        println!(
            "{name:<34} {ours:>10.1} {loop_:>12.1} {:>7.2}",
            loop_ / ours
        );
    }
    println!("(ratio = word loop / zram_rs: above 1 means zram_rs is faster)");
}
