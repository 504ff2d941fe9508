//! Compression units' pure logic: the sizes a device accepts on each page size, the whole units
//! of a request against a naive walk, the pieces of an object, and the member masks against a
//! model of a device whose pages are written as units and alone, discarded and freed in any
//! order: every object is freed exactly once, when its last page goes, and never while a page
//! refers to it.

use proptest::prelude::*;
use std::collections::HashMap;
use zram_rs_logic::unit::{Members, Pieces, Refusal, UnitSize, MAX_UNIT_PAGES, UNIT_BYTES};

#[test]
fn unit_sizes_on_each_page_size() {
    // 4 KiB pages: 1, 4 and 16 pages.
    for (bytes, pages) in [(4096, 1), (16384, 4), (65536, 16)] {
        assert_eq!(
            UnitSize::of_bytes(bytes, 12).map(UnitSize::pages),
            Ok(pages)
        );
    }
    // 16 KiB pages: 4 KiB is below a page; 16 KiB is one page, 64 KiB four.
    assert_eq!(UnitSize::of_bytes(4096, 14), Err(Refusal::BelowPage));
    assert_eq!(UnitSize::of_bytes(16384, 14), Ok(UnitSize::PAGE));
    assert_eq!(UnitSize::of_bytes(65536, 14).map(UnitSize::pages), Ok(4));
    // 64 KiB pages: only the page itself.
    assert_eq!(UnitSize::of_bytes(16384, 16), Err(Refusal::BelowPage));
    assert_eq!(UnitSize::of_bytes(65536, 16), Ok(UnitSize::PAGE));
    for bytes in [0, 1, 2048, 8192, 32768, 131072, 4097, u64::MAX] {
        assert_eq!(
            UnitSize::of_bytes(bytes, 12),
            Err(Refusal::NotAUnitSize),
            "{bytes}"
        );
    }
    for shift in [12, 14, 16] {
        for bytes in UNIT_BYTES {
            if let Ok(size) = UnitSize::of_bytes(bytes, shift) {
                assert_eq!(size.bytes(shift), bytes);
                assert!(size.pages() <= MAX_UNIT_PAGES);
            }
        }
    }
}

#[test]
fn unit_size_writes() {
    assert_eq!(UnitSize::parse(b"16384\n", 12).map(UnitSize::pages), Ok(4));
    assert_eq!(UnitSize::parse(b"+65536", 12).map(UnitSize::pages), Ok(16));
    assert_eq!(UnitSize::parse(b"4096", 12), Ok(UnitSize::PAGE));
    for refused in [
        &b""[..],
        b"\n",
        b"16k",
        b" 4096",
        b"0x1000",
        b"-4096",
        b"4096 4096",
    ] {
        assert_eq!(
            UnitSize::parse(refused, 12),
            Err(Refusal::NotANumber),
            "{refused:?}"
        );
    }
    assert_eq!(UnitSize::parse(b"8192", 12), Err(Refusal::NotAUnitSize));
}

fn sizes() -> impl Strategy<Value = UnitSize> {
    prop_oneof![Just(4096u64), Just(16384), Just(65536)]
        .prop_map(|bytes| UnitSize::of_bytes(bytes, 12).unwrap())
}

proptest! {
    #[test]
    fn whole_units_are_the_units_inside_the_request(
        size in sizes(),
        start in 0u64..200,
        len in 0u64..200,
    ) {
        let pages = start..start + len;
        let naive: Vec<u64> = (0..400)
            .filter(|&u| {
                let p = size.pages_of(u);
                p.start >= pages.start && p.end <= pages.end
            })
            .collect();
        let found: Vec<u64> = size.whole_units(pages).collect();
        prop_assert_eq!(found, naive);
    }

    #[test]
    fn every_page_is_in_its_unit(size in sizes(), index in 0u64..1_000_000) {
        let (unit, place) = size.locate(index);
        prop_assert!(place < size.pages());
        prop_assert_eq!(size.pages_of(unit).nth(place), Some(index));
    }

    #[test]
    fn pieces_cover_the_object_in_whole_pages_then_the_rest(
        len in 1usize..70_000,
        page in prop_oneof![Just(4096usize), Just(16384), Just(65536)],
    ) {
        let pieces = Pieces::new(len, page);
        let ranges: Vec<_> = pieces.ranges().collect();
        prop_assert_eq!(ranges.len(), pieces.count());
        prop_assert_eq!(ranges.len(), len.div_ceil(page));
        let mut at = 0;
        for (i, r) in ranges.iter().enumerate() {
            prop_assert_eq!(r.start, at);
            prop_assert!(r.len() <= page && !r.is_empty());
            if i + 1 < ranges.len() {
                prop_assert_eq!(r.len(), page);
            }
            at = r.end;
        }
        prop_assert_eq!(at, len);
        prop_assert!(pieces.range(pieces.count()).is_empty());
    }

    #[test]
    fn an_object_is_worth_keeping_below_a_huge_page_per_page(
        size in sizes(),
        len in 0usize..70_000,
    ) {
        let huge = 3264;
        prop_assert_eq!(size.worth_an_object(len, huge), len > 0 && len < huge * size.pages());
    }
}

/// What a page of the model device holds: data of its own (an id), or a place in an object.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Held {
    Alone(u32),
    Member(u32),
}

/// An operation on the model device: a whole unit written (with some of its pages stored
/// apart, as same-filled pages are), a page written alone, a page freed (discard, swap's
/// slot-free notification, an overwrite's old content).
#[derive(Clone, Debug)]
enum Op {
    Unit(u64, u16),
    Page(u64),
    Free(u64),
}

fn ops(pages: u64) -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(
        prop_oneof![
            (0..pages, any::<u16>()).prop_map(|(p, apart)| Op::Unit(p, apart)),
            (0..pages).prop_map(Op::Page),
            (0..pages).prop_map(Op::Free),
        ],
        0..300,
    )
}

/// The model: slots, and each object's mask as the kernel's atomic word would hold it.
struct Device {
    size: UnitSize,
    slots: Vec<Option<Held>>,
    masks: HashMap<u32, Members>,
    freed: Vec<u32>,
    next: u32,
}

impl Device {
    /// Empties slot `index` as the slot's lock holder does: a member takes its bit away and
    /// frees the object if it was the last.
    fn clear(&mut self, index: u64) {
        if let Some(Held::Member(object)) = self.slots[index as usize].take() {
            let (_, place) = self.size.locate(index);
            let old = self.masks[&object];
            assert!(old.contains(place), "a page's bit taken twice");
            self.masks.insert(object, old.without(place));
            if Members::released_last(old, Members::page(place)) {
                assert!(!self.freed.contains(&object), "object freed twice");
                self.masks.remove(&object);
                self.freed.push(object);
            }
        }
    }

    fn apply(&mut self, op: &Op) {
        self.next += 1;
        let id = self.next;
        match *op {
            Op::Unit(page, apart) => {
                let (unit, _) = self.size.locate(page);
                let apart = Members::from_bits(apart);
                let members = Members::all_but(self.size, apart);
                if !members.is_empty() {
                    self.masks.insert(id, members);
                }
                for (place, index) in self.size.pages_of(unit).enumerate() {
                    if index as usize >= self.slots.len() {
                        continue;
                    }
                    self.clear(index);
                    self.slots[index as usize] = Some(if members.contains(place) {
                        Held::Member(id)
                    } else {
                        Held::Alone(id)
                    });
                }
            }
            Op::Page(index) => {
                self.clear(index);
                self.slots[index as usize] = Some(Held::Alone(id));
            }
            Op::Free(index) => self.clear(index),
        }
    }

    /// Every live object's mask is exactly the pages that refer to it, all in its one unit; no
    /// page refers to a freed object.
    fn check(&self) {
        let mut refs: HashMap<u32, Members> = HashMap::new();
        for (index, held) in self.slots.iter().enumerate() {
            if let Some(Held::Member(object)) = held {
                assert!(
                    !self.freed.contains(object),
                    "page {index} refers to a freed object"
                );
                let (_, place) = self.size.locate(index as u64);
                let mask = refs.entry(*object).or_insert(Members::NONE);
                *mask = mask.with(place);
            }
        }
        assert_eq!(refs, self.masks);
        for (object, mask) in &self.masks {
            assert!(!mask.is_empty(), "object {object} kept without a page");
            assert!(mask.count() as usize <= self.size.pages());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]
    #[test]
    fn an_object_goes_with_its_last_page(size in sizes(), ops in ops(64)) {
        let mut device = Device {
            size,
            slots: vec![None; 64],
            masks: HashMap::new(),
            freed: Vec::new(),
            next: 0,
        };
        for op in &ops {
            device.apply(op);
            device.check();
        }
        for index in 0..64 {
            device.clear(index);
        }
        // A reset frees every object, each once.
        prop_assert!(device.masks.is_empty());
        let mut freed = device.freed.clone();
        freed.sort_unstable();
        freed.dedup();
        prop_assert_eq!(freed.len(), device.freed.len());
    }
}
