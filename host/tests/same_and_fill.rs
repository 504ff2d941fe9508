//! The same-element scan against a naive scan, and the fill against a byte-by-byte model.

use proptest::prelude::*;
use zram_rs_logic::fill::{fill, memset64};
use zram_rs_logic::same::same_filled;

const PAGE: usize = 4096;

/// A page-aligned page, as the kernel maps them.
#[repr(C, align(4096))]
struct Page([u8; PAGE]);

/// Up to 64 KiB, page-aligned.
#[repr(C, align(4096))]
struct Pages([u8; 65536]);

fn page_of(word: u64) -> Box<Page> {
    let mut page = Box::new(Page([0; PAGE]));
    for chunk in page.0.chunks_exact_mut(8) {
        chunk.copy_from_slice(&word.to_ne_bytes());
    }
    page
}

/// The obvious scan: every word equals the first.
fn naive(page: &[u8]) -> Option<u64> {
    let first = u64::from_ne_bytes(page[..8].try_into().unwrap());
    page.chunks_exact(8)
        .all(|c| u64::from_ne_bytes(c.try_into().unwrap()) == first)
        .then_some(first)
}

#[test]
fn every_word_position_breaks_sameness() {
    for word in [0u64, u64::MAX, 0xdead_beef_dead_beef, 0x0102_0304_0506_0708] {
        let page = page_of(word);
        assert_eq!(same_filled(&page.0), Some(word));
        for position in 0..PAGE / 8 {
            for bit in [0, 31, 63] {
                let mut changed = page_of(word);
                let start = position * 8;
                let mut value = u64::from_ne_bytes(changed.0[start..start + 8].try_into().unwrap());
                value ^= 1 << bit;
                changed.0[start..start + 8].copy_from_slice(&value.to_ne_bytes());
                assert_eq!(
                    same_filled(&changed.0),
                    None,
                    "word {word:#x} position {position} bit {bit}"
                );
            }
        }
    }
}

#[test]
fn every_byte_position_breaks_sameness() {
    for index in 0..PAGE {
        let mut page = page_of(0);
        page.0[index] = 1;
        assert_eq!(same_filled(&page.0), None, "byte {index}");
    }
}

#[test]
fn short_and_odd_inputs() {
    let sevens = page_of(u64::from_ne_bytes([7; 8]));
    assert_eq!(same_filled(&[]), None);
    assert_eq!(same_filled(&sevens.0[..3]), None);
    assert_eq!(same_filled(&sevens.0[..12]), None);
    assert_eq!(
        same_filled(&sevens.0[..8]),
        Some(u64::from_ne_bytes([7; 8]))
    );
    assert_eq!(
        same_filled(&sevens.0[..24]),
        Some(u64::from_ne_bytes([7; 8]))
    );
}

#[test]
fn memset64_writes_exactly_count_words() {
    let mut buffer = vec![0xaau8; 8 * 40];
    // SAFETY: 30 words from word 5 stay inside the 40-word buffer; Vec<u8> of this size is
    // 8-aligned in practice but memset64 on x86_64 needs no alignment.
    unsafe {
        memset64(
            buffer.as_mut_ptr().add(40).cast(),
            0x1122_3344_5566_7788,
            30,
        )
    };
    assert!(buffer[..40].iter().all(|&b| b == 0xaa));
    assert!(buffer[40 + 240..].iter().all(|&b| b == 0xaa));
    for chunk in buffer[40..280].chunks_exact(8) {
        assert_eq!(
            u64::from_ne_bytes(chunk.try_into().unwrap()),
            0x1122_3344_5566_7788
        );
    }
}

proptest! {
    #[test]
    fn scan_agrees_with_naive_when_one_word_differs(
        word: u64,
        position in 0usize..PAGE / 8,
        flip in 1u64..,
        pages in prop::sample::select(vec![4096usize, 16384, 65536]),
    ) {
        // A same-filled buffer of 4, 16 or 64 KiB with one word changed (by any non-zero xor):
        // the scan must see the difference wherever it is, and agree with the naive scan.
        let mut whole = Box::new(Pages([0; 65536]));
        let buffer = &mut whole.0[..pages];
        for chunk in buffer.chunks_exact_mut(8) {
            chunk.copy_from_slice(&word.to_ne_bytes());
        }
        prop_assert_eq!(same_filled(buffer), Some(word));
        let at = (position * 8 * (pages / PAGE)) % pages;
        let changed = word ^ flip;
        buffer[at..at + 8].copy_from_slice(&changed.to_ne_bytes());
        prop_assert_eq!(same_filled(buffer), None);
        prop_assert_eq!(same_filled(buffer), naive(buffer));
    }

    #[test]
    fn unaligned_slices_are_not_looked_at(word: u64, shift in 1usize..8, words in 1usize..PAGE / 8) {
        // A same-filled slice that does not start on a word boundary (a page always does) is
        // not scanned: `None`, so that its content is compressed.
        let page = page_of(word);
        prop_assert_eq!(same_filled(&page.0[shift..shift + (words - 1) * 8]), None);
        prop_assert_eq!(same_filled(&page.0[..words * 8]), Some(word));
    }

    #[test]
    fn scan_finds_every_fill_value(word: u64) {
        prop_assert_eq!(same_filled(&page_of(word).0), Some(word));
    }

    #[test]
    fn fill_writes_exactly_the_range(word: u64, start in 0usize..PAGE, len in 0usize..PAGE) {
        let len = len.min(PAGE - start);
        let expected = page_of(word);
        let mut page = Box::new(Page([0x5a; PAGE]));
        fill(&mut page.0[start..start + len], start, word);
        prop_assert!(page.0[..start].iter().all(|&b| b == 0x5a));
        prop_assert_eq!(&page.0[start..start + len], &expected.0[start..start + len]);
        prop_assert!(page.0[start + len..].iter().all(|&b| b == 0x5a));
    }

    #[test]
    fn fill_honours_the_phase_in_unaligned_buffers(word: u64, shift in 0usize..8, phase in 0usize..8, len in 0usize..100) {
        let expected = page_of(word);
        let mut buffer = vec![0u8; len + 16];
        fill(&mut buffer[shift..shift + len], phase, word);
        prop_assert_eq!(&buffer[shift..shift + len], &expected.0[phase..phase + len]);
    }
}
