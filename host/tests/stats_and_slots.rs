//! Stat line formats and slot encoding.

use proptest::prelude::*;
use zram_rs_logic::slot::{discard_pages, SlotContent, PAGE_SIZE};
use zram_rs_logic::stats::{IoStat, MmStat};

#[test]
fn idle_device_lines_match_c() {
    let mut text = String::new();
    MmStat::default().write_to(&mut text).unwrap();
    assert_eq!(
        text,
        "       0        0        0        0        0        0        0        0        0\n"
    );
    let mut text = String::new();
    IoStat::default().write_to(&mut text).unwrap();
    assert_eq!(text, "       0        0 0        0\n");
}

#[test]
fn wide_values_are_not_cut() {
    let stat = MmStat {
        orig_data_size: 104_656_896,
        compr_data_size: 2_154_894,
        mem_used_total: 3_452_928,
        mem_limit: 0,
        mem_used_max: 3_452_928,
        same_pages: 12,
        pages_compacted: 0,
        huge_pages: 1,
        huge_pages_since: 3,
    };
    let mut text = String::new();
    stat.write_to(&mut text).unwrap();
    assert_eq!(
        text,
        "104656896  2154894  3452928        0  3452928       12        0        1        3\n"
    );
}

proptest! {
    #[test]
    fn mm_stat_has_nine_fields_in_order(fields: [u32; 9]) {
        let f: Vec<u64> = fields.iter().map(|&v| u64::from(v)).collect();
        let stat = MmStat {
            orig_data_size: f[0], compr_data_size: f[1], mem_used_total: f[2], mem_limit: f[3],
            mem_used_max: f[4], same_pages: f[5], pages_compacted: f[6], huge_pages: f[7],
            huge_pages_since: f[8],
        };
        let mut text = String::new();
        stat.write_to(&mut text).unwrap();
        let parsed: Vec<u64> = text.split_whitespace().map(|t| t.parse().unwrap()).collect();
        prop_assert_eq!(parsed, f);
        prop_assert!(text.ends_with('\n'));
    }

    #[test]
    fn slot_content_round_trips(handle in 1usize.., size in 1usize..=PAGE_SIZE, huge: bool, word: usize) {
        for content in [
            SlotContent::Empty,
            SlotContent::Same(word),
            SlotContent::Stored { handle, size, huge },
        ] {
            let (value, flags) = content.encode().unwrap();
            prop_assert_eq!(flags & zram_rs_logic::slot::LOCK, 0);
            prop_assert_eq!(SlotContent::decode(value, flags), content);
            // The lock bit never changes what a slot holds.
            prop_assert_eq!(SlotContent::decode(value, flags | zram_rs_logic::slot::LOCK), content);
        }
    }

    #[test]
    fn discard_frees_exactly_the_whole_pages(start in 0u64..100_000, len in 0u64..100_000) {
        let page = PAGE_SIZE as u64;
        let freed = discard_pages(start, len);
        // A page is freed exactly when the range covers all of it.
        for index in 0..(start + len) / page + 2 {
            let covered = index * page >= start && (index + 1) * page <= start + len;
            prop_assert_eq!(freed.contains(&index), covered, "page {}", index);
        }
    }
}

#[test]
fn invalid_stored_content_is_rejected() {
    assert!(SlotContent::Stored {
        handle: 0,
        size: 1,
        huge: false
    }
    .encode()
    .is_err());
    assert!(SlotContent::Stored {
        handle: 1,
        size: 0,
        huge: false
    }
    .encode()
    .is_err());
    assert!(SlotContent::Stored {
        handle: 1,
        size: PAGE_SIZE + 1,
        huge: true
    }
    .encode()
    .is_err());
}
