//! Stat line formats and slot encoding.

use proptest::prelude::*;
use zram_rs_logic::slot::{
    InvalidContent, Layout, Priority, SlotContent, LOCK, MAX_PRIORITIES, RECOMPRESSING, UNIT,
    UNTOUCHED, WAITERS,
};
use zram_rs_logic::stat_format::{BlockState, DebugStat, IoStat, MmStat};

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
fn block_state_lines_match_c() {
    let line = |state: BlockState| {
        let mut out = String::new();
        let mut buf = [0u8; BlockState::MAX_LEN + 1];
        let len = state.write_into(&mut buf).unwrap();
        out.push_str(std::str::from_utf8(&buf[..len]).unwrap());
        out
    };
    // printf '%12zd %12lld.%06lu %c%c%c%c%c%c\n' 7 1234 0 . w h . . .
    assert_eq!(
        line(BlockState {
            index: 7,
            seconds: 1234,
            written_back: true,
            huge: true,
            ..Default::default()
        }),
        "           7         1234.000000 .wh...\n"
    );
    assert_eq!(
        line(BlockState {
            index: 0,
            same: true,
            idle: true,
            recompressed: true,
            incompressible: true,
            ..Default::default()
        }),
        "           0            0.000000 s..irn\n"
    );
    let widest = line(BlockState {
        index: usize::MAX,
        seconds: u64::MAX,
        micros: 999_999,
        ..Default::default()
    });
    assert_eq!(widest.len(), BlockState::MAX_LEN);
    // Into a read: only with a byte to spare, as C's snprintf() check.
    let state = BlockState {
        index: 3,
        ..Default::default()
    };
    let len = line(state).len();
    let mut out = vec![0u8; len];
    assert_eq!(state.write_into(&mut out), None);
    out.push(0);
    assert_eq!(state.write_into(&mut out), Some(len));
    assert_eq!(&out[..len], line(state).as_bytes());
}

#[test]
fn debug_stat_matches_each_kernel() {
    let mut text = String::new();
    DebugStat {
        writestall: Some(3),
        miss_free: 12,
    }
    .write_to(&mut text)
    .unwrap();
    // 6.12: "version: %d\n%8llu %8llu\n".
    assert_eq!(text, "version: 1\n       3       12\n");
    let mut text = String::new();
    DebugStat {
        writestall: None,
        miss_free: 12,
    }
    .write_to(&mut text)
    .unwrap();
    // 7.3: "version: %d\n0 %8llu\n".
    assert_eq!(text, "version: 1\n0       12\n");
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
    // The formatter against `core::fmt`'s padding (C's `%8llu`, `%8ld`, `%12zd`, `%06lu`), over
    // the whole range of each field, short numbers (padded) as often as long ones.
    #[test]
    fn lines_match_padded_formatting(
        f in proptest::array::uniform9(prop_oneof![0u64..100_000, any::<u64>()]),
        signed in prop_oneof![-100_000i64..100_000, any::<i64>()],
        index in prop_oneof![0usize..100_000, any::<usize>()],
        seconds in prop_oneof![0u64..100_000, any::<u64>()],
        micros in 0u32..1_000_000,
        marks: [bool; 6],
    ) {
        let stat = MmStat {
            orig_data_size: f[0], compr_data_size: f[1], mem_used_total: f[2], mem_limit: f[3],
            mem_used_max: signed as u64, same_pages: f[5], pages_compacted: f[6], huge_pages: f[7],
            huge_pages_since: f[8],
        };
        let mut text = String::new();
        stat.write_to(&mut text).unwrap();
        prop_assert_eq!(text, format!("{:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}\n",
            f[0], f[1], f[2], f[3], signed, f[5], f[6], f[7], f[8]));
        let mut text = String::new();
        IoStat { failed_reads: f[0], failed_writes: f[1], notify_free: f[2] }.write_to(&mut text).unwrap();
        prop_assert_eq!(text, format!("{:>8} {:>8} 0 {:>8}\n", f[0], f[1], f[2]));
        let mut text = String::new();
        DebugStat { writestall: Some(f[3]), miss_free: f[4] }.write_to(&mut text).unwrap();
        prop_assert_eq!(text, format!("version: 1\n{:>8} {:>8}\n", f[3], f[4]));
        let state = BlockState {
            index, seconds, micros,
            same: marks[0], written_back: marks[1], huge: marks[2], idle: marks[3],
            recompressed: marks[4], incompressible: marks[5],
        };
        let mark = |i: usize, c: char| if marks[i] { c } else { '.' };
        let expected = format!("{:>12} {:>12}.{:06} {}{}{}{}{}{}\n", index, seconds, micros,
            mark(0, 's'), mark(1, 'w'), mark(2, 'h'), mark(3, 'i'), mark(4, 'r'), mark(5, 'n'));
        let mut out = [0u8; BlockState::MAX_LEN + 1];
        prop_assert_eq!(state.write_into(&mut out), Some(expected.len()));
        prop_assert_eq!(&out[..expected.len()], expected.as_bytes());
    }

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
    fn slot_words_match_c_layout_4k(handle in 1usize.., size in 1usize..=4096, huge: bool, word: usize, idle: bool, priority in 0u8..4, incompressible: bool) {
        check_layout::<12, 3>(handle, size, huge, word, idle, priority, incompressible)?;
    }

    #[test]
    fn slot_words_match_c_layout_16k(handle in 1usize.., size in 1usize..=16384, huge: bool, word: usize, idle: bool, priority in 0u8..4, incompressible: bool) {
        check_layout::<14, 3>(handle, size, huge, word, idle, priority, incompressible)?;
    }

    #[test]
    fn slot_words_match_c_layout_64k(handle in 1usize.., size in 1usize..=65536, huge: bool, word: usize, idle: bool, priority in 0u8..4, incompressible: bool) {
        check_layout::<16, 3>(handle, size, huge, word, idle, priority, incompressible)?;
    }

    #[test]
    fn slot_words_match_c_7_3_layout(handle in 1usize.., size in 1usize..=16384, huge: bool, word: usize, idle: bool, priority in 0u8..4, incompressible: bool) {
        check_layout::<12, 4>(handle, size.min(4096), huge, word, idle, priority, incompressible)?;
        check_layout::<14, 4>(handle, size, huge, word, idle, priority, incompressible)?;
    }

    #[test]
    fn priorities_are_0_to_3(n: u64) {
        prop_assert_eq!(Priority::new(n).map(Priority::get), (n < MAX_PRIORITIES as u64).then_some(n as u8));
    }

    #[test]
    fn discard_frees_exactly_the_whole_pages(start in 0u64..400_000, len in 0u64..400_000) {
        check_discard::<12>(start, len)?;
        check_discard::<14>(start, len)?;
        check_discard::<16>(start, len)?;
    }
}

/// C zram's flags word for a page shift, written out from `zram_drv.h` independently of
/// `slot.rs`: the object size in bits 0..=PAGE_SHIFT, then `enum zram_pageflags` from
/// `ZRAM_FLAG_SHIFT = PAGE_SHIFT + 1`: on 6.12 (`v7 == false`) SAME, WB, UNDER_WB, HUGE, IDLE,
/// INCOMPRESSIBLE and two priority bits; on 7.3 SAME, ENTRY_LOCK, WB, PP_SLOT, HUGE, IDLE,
/// INCOMPRESSIBLE and two priority bits.
fn c_flags(page_shift: u32, v7: bool, size: usize, same: bool, huge: bool, idle: bool) -> u32 {
    c_flags_with(page_shift, v7, size, same, huge, idle, 0, false)
}

/// [`c_flags`] with an algorithm priority (`ZRAM_COMP_PRIORITY_BIT1` and `BIT2`, set as C's
/// `zram_set_priority()` does) and `ZRAM_INCOMPRESSIBLE`.
#[allow(clippy::too_many_arguments)]
fn c_flags_with(
    page_shift: u32,
    v7: bool,
    size: usize,
    same: bool,
    huge: bool,
    idle: bool,
    priority: u8,
    incompressible: bool,
) -> u32 {
    let shift = page_shift + 1;
    let (huge_at, idle_at) = if v7 { (4, 5) } else { (3, 4) };
    let (incompressible_at, priority_at) = (idle_at + 1, idle_at + 2);
    let mut flags = size as u32;
    if incompressible {
        flags |= 1 << (shift + incompressible_at);
    }
    flags |= (u32::from(priority) & 0b11) << (shift + priority_at);
    if same {
        flags |= 1 << shift;
    }
    if huge {
        flags |= 1 << (shift + huge_at);
    }
    if idle {
        flags |= 1 << (shift + idle_at);
    }
    flags
}

fn check_layout<const P: u32, const H: u32>(
    handle: usize,
    size: usize,
    huge: bool,
    word: usize,
    idle: bool,
    priority: u8,
    incompressible: bool,
) -> Result<(), TestCaseError> {
    let priority = Priority::new(u64::from(priority)).unwrap();
    let () = Layout::<P, H>::VALID;
    let v7 = H == 4;
    prop_assert_eq!(Layout::<P, H>::PAGE_SIZE, 1usize << P);
    let idle_bit = c_flags(P, v7, 0, false, false, true);
    // `ZRAM_WB` and the writeback-in-flight bit (6.12's `ZRAM_UNDER_WB`, 7.3's
    // `ZRAM_PP_SLOT`), from the enum orders above.
    let (wb_bit, in_writeback_bit) = if v7 {
        (1 << (P + 3), 1 << (P + 4))
    } else {
        (1 << (P + 2), 1 << (P + 3))
    };
    prop_assert_eq!(Layout::<P, H>::WB, wb_bit);
    prop_assert_eq!(Layout::<P, H>::IN_WRITEBACK, in_writeback_bit);
    for (content, same, stored_size, stored_huge) in [
        (SlotContent::Empty, false, 0, false),
        (SlotContent::Same(word), true, 0, false),
        (SlotContent::WrittenBack(word), false, 0, false),
        (
            SlotContent::Stored {
                handle,
                size,
                huge,
                priority,
            },
            false,
            size,
            huge,
        ),
    ] {
        let written_back = matches!(content, SlotContent::WrittenBack(_));
        let (value, flags) = Layout::<P, H>::encode(content).unwrap();
        // The write path's unchecked encoding agrees for every valid object.
        let stored_priority = if let SlotContent::Stored {
            handle,
            size,
            huge,
            priority,
        } = content
        {
            prop_assert_eq!(
                Layout::<P, H>::encode_object(handle, size, huge, priority),
                (value, flags)
            );
            priority.get()
        } else {
            0
        };
        // The words are C's words.
        let wb = if written_back { wb_bit } else { 0 };
        prop_assert_eq!(
            flags,
            c_flags_with(
                P,
                v7,
                stored_size,
                same,
                stored_huge,
                false,
                stored_priority,
                false
            ) | wb
        );
        prop_assert_eq!(Layout::<P, H>::priority(flags).get(), stored_priority);
        // The incompressible mark is C's bit, and no part of the content.
        let incompressible_bit = c_flags_with(P, v7, 0, false, false, false, 0, true);
        prop_assert_eq!(Layout::<P, H>::INCOMPRESSIBLE, incompressible_bit);
        if incompressible {
            prop_assert_eq!(
                Layout::<P, H>::decode(value, flags | incompressible_bit),
                content
            );
        }
        let expected_value = match content {
            SlotContent::Empty => 0,
            SlotContent::Same(word) | SlotContent::WrittenBack(word) => word,
            SlotContent::Stored { handle, .. } => handle,
            SlotContent::InUnit(record) => record,
        };
        prop_assert_eq!(value, expected_value);
        prop_assert_eq!(flags & (LOCK | WAITERS), 0);
        prop_assert_eq!(Layout::<P, H>::decode(value, flags), content);
        // Neither the lock and waiters bits, the idle bit nor the writeback-in-flight bit
        // changes what a slot holds.
        prop_assert_eq!(
            Layout::<P, H>::decode(value, flags | LOCK | WAITERS | idle_bit | in_writeback_bit),
            content
        );
        // A slot being written back keeps its idle mark as it is.
        for found_idle in [false, true] {
            let start = flags | in_writeback_bit | if idle { idle_bit } else { 0 };
            prop_assert_eq!(Layout::<P, H>::mark_idle(value, start, found_idle), start);
        }
        // `idle` marks or unmarks slots holding an object only, as C's mark_idle().
        let start = if idle { flags | idle_bit } else { flags };
        let stored = matches!(content, SlotContent::Stored { .. });
        for found_idle in [false, true] {
            let marked = Layout::<P, H>::mark_idle(value, start, found_idle);
            let expected = if stored { found_idle } else { idle };
            prop_assert_eq!(marked & idle_bit != 0, expected);
            prop_assert_eq!(marked & !idle_bit, flags);
        }
    }
    Ok(())
}

fn check_discard<const P: u32>(start: u64, len: u64) -> Result<(), TestCaseError> {
    let page = 1u64 << P;
    let freed = Layout::<P>::discard_pages(start, len);
    // A page is freed exactly when the range covers all of it.
    for index in 0..(start + len) / page + 2 {
        let covered = index * page >= start && (index + 1) * page <= start + len;
        prop_assert_eq!(freed.contains(&index), covered, "page {}", index);
    }
    Ok(())
}

/// A unit's page: the record's address with zram_rs's `UNIT` bit alone, above every C flag on
/// every page size and flag order; decoded whatever the marks beside it; idle-marked as an
/// object's page; a zero address is not a content.
fn check_unit_page<const P: u32, const H: u32>(record: usize) -> Result<(), TestCaseError> {
    let () = Layout::<P, H>::VALID;
    let content = SlotContent::InUnit(record);
    prop_assert_eq!(
        Layout::<P, H>::encode(SlotContent::InUnit(0)),
        Err(InvalidContent)
    );
    let (value, flags) = Layout::<P, H>::encode(content).unwrap();
    prop_assert_eq!((value, flags), (record, UNIT));
    // Above C's last flag, the second priority bit.
    prop_assert!(UNIT > Layout::<P, H>::PRIORITY);
    prop_assert_eq!(UNIT & (LOCK | WAITERS | RECOMPRESSING | UNTOUCHED), 0);
    let marks = LOCK | WAITERS | Layout::<P, H>::IDLE | Layout::<P, H>::IN_WRITEBACK;
    prop_assert_eq!(Layout::<P, H>::decode(value, flags | marks), content);
    prop_assert_eq!(
        Layout::<P, H>::mark_idle(value, flags, true),
        flags | Layout::<P, H>::IDLE
    );
    prop_assert_eq!(
        Layout::<P, H>::mark_idle(value, flags | Layout::<P, H>::IDLE, false),
        flags
    );
    Ok(())
}

proptest! {
    #[test]
    fn unit_pages_encode_apart_from_c_flags(record in 1usize..) {
        check_unit_page::<12, 3>(record)?;
        check_unit_page::<12, 4>(record)?;
        check_unit_page::<14, 3>(record)?;
        check_unit_page::<14, 4>(record)?;
        check_unit_page::<16, 3>(record)?;
        check_unit_page::<16, 4>(record)?;
    }
}

#[test]
fn invalid_stored_content_is_rejected() {
    type L = Layout<12>;
    let stored = |handle, size| SlotContent::Stored {
        handle,
        size,
        huge: false,
        priority: Priority::PRIMARY,
    };
    assert!(L::encode(stored(0, 1)).is_err());
    assert!(L::encode(stored(1, 0)).is_err());
    assert!(L::encode(stored(1, 4097)).is_err());
    assert!(Layout::<14>::encode(stored(1, 4097)).is_ok());
    assert!(Layout::<14>::encode(stored(1, 16385)).is_err());
}
