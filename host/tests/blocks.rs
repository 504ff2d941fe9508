//! The backing device's block map against a model set, and under concurrent claims.

use proptest::prelude::*;
use std::collections::BTreeSet;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use zram_rs_logic::blocks::{words_for, BlockMap, WrongSize};

/// A map that keeps block 0 unused (6.12).
fn map(blocks: usize) -> BlockMap<Vec<AtomicUsize>> {
    map_from(blocks, true)
}

fn map_from(blocks: usize, skip_zero: bool) -> BlockMap<Vec<AtomicUsize>> {
    let words = (0..words_for(blocks))
        .map(|_| AtomicUsize::new(0))
        .collect();
    BlockMap::new(words, blocks, skip_zero).unwrap()
}

#[derive(Debug, Clone)]
enum Op {
    Claim,
    Release(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => Just(Op::Claim),
        1 => (0usize..300).prop_map(Op::Release),
    ]
}

proptest! {
    /// Claims return free blocks (from 1, or from 0 where block 0 is used) until none is left;
    /// releases free exactly the claimed blocks; the count of used blocks follows.
    #[test]
    fn claims_and_releases_follow_a_set(
        blocks in 0usize..260,
        skip_zero: bool,
        ops in prop::collection::vec(op(), 0..600),
    ) {
        let m = map_from(blocks, skip_zero);
        let first = usize::from(skip_zero);
        let mut model = BTreeSet::new();
        for op in ops {
            match op {
                Op::Claim => match m.claim() {
                    Some(b) => {
                        prop_assert!(b >= first && b < blocks, "block {} of {}", b, blocks);
                        prop_assert!(model.insert(b), "block {} claimed twice", b);
                    }
                    None => prop_assert_eq!(model.len(), blocks.saturating_sub(first)),
                },
                Op::Release(b) => {
                    prop_assert_eq!(m.release(b), model.remove(&b));
                }
            }
            prop_assert_eq!(m.used(), model.len());
        }
        for b in 0..blocks + 2 {
            prop_assert_eq!(m.is_claimed(b), model.contains(&b));
        }
    }
}

#[test]
fn block_zero_and_tiny_devices() {
    for blocks in [0, 1] {
        assert_eq!(map(blocks).claim(), None);
    }
    let m = map(2);
    assert_eq!(m.claim(), Some(1));
    assert_eq!(m.claim(), None);
    assert!(!m.release(0));
    assert!(m.release(1));
    assert_eq!(m.claim(), Some(1));
    // 7.3 hands out block 0 too.
    assert_eq!(map_from(0, false).claim(), None);
    let m = map_from(1, false);
    assert_eq!(m.claim(), Some(0));
    assert_eq!(m.claim(), None);
    assert!(m.release(0));
    assert_eq!(m.claim(), Some(0));
}

#[test]
fn search_resumes_after_the_last_claim_and_wraps() {
    let m = map(200);
    for expected in 1..200 {
        assert_eq!(m.claim(), Some(expected));
    }
    let from_zero = map_from(130, false);
    for expected in 0..130 {
        assert_eq!(from_zero.claim(), Some(expected));
    }
    assert_eq!(from_zero.claim(), None);
    assert_eq!(m.claim(), None);
    assert!(m.release(5));
    assert!(m.release(150));
    // The last claim was 199: the search wraps to the start.
    assert_eq!(m.claim(), Some(5));
    assert_eq!(m.claim(), Some(150));
    assert_eq!(m.claim(), None);
}

#[test]
fn wrong_sizes_are_refused() {
    let words = |n: usize| (0..n).map(|_| AtomicUsize::new(0)).collect::<Vec<_>>();
    assert_eq!(BlockMap::new(words(1), 65, true).err(), Some(WrongSize));
    assert_eq!(BlockMap::new(words(3), 65, false).err(), Some(WrongSize));
    let dirty = words(2);
    dirty[1].store(1, std::sync::atomic::Ordering::Relaxed);
    assert_eq!(BlockMap::new(dirty, 65, true).err(), Some(WrongSize));
}

#[test]
fn concurrent_claims_hand_out_each_block_once() {
    let blocks = 10_000;
    let m = Arc::new(map(blocks));
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let m = Arc::clone(&m);
            std::thread::spawn(move || {
                let mut got = Vec::new();
                let mut claims = 0;
                while let Some(b) = m.claim() {
                    got.push(b);
                    claims += 1;
                    // Give one of every seven back, as overwrites do.
                    if claims % 7 == t {
                        let b = got.pop().unwrap();
                        assert!(m.release(b));
                    }
                }
                got
            })
        })
        .collect();
    let mut all: Vec<usize> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    all.sort_unstable();
    let n = all.len();
    all.dedup();
    assert_eq!(all.len(), n, "a block was handed out twice");
    assert_eq!(n, m.used());
    // Every thread stopped at a moment the map was full; releases after that may leave holes,
    // and those are found again.
    while m.claim().is_some() {}
    assert_eq!(m.used(), blocks - 1);
}
