//! The GPU radix sort against a stable `sort()`.

use rand::Rng;
use raycontact::GpuRadixSort;
use raycontact_tests::{ctx, rng};

fn check(sort: &mut GpuRadixSort, keys: &[u32]) {
    let values: Vec<u32> = (0..keys.len() as u32).collect();
    let (k, v) = sort.sort(keys, &values).unwrap();
    let mut expected: Vec<(u32, u32)> = keys.iter().copied().zip(values).collect();
    expected.sort_by_key(|&(k, _)| k); // stable: equal keys keep their order
    let (ek, ev): (Vec<u32>, Vec<u32>) = expected.into_iter().unzip();
    assert_eq!(k, ek, "keys, n = {}", keys.len());
    assert_eq!(v, ev, "values (stability), n = {}", keys.len());
}

#[test]
fn radix_sort_matches_sort() {
    let mut sort = GpuRadixSort::new(ctx(), 16);
    let mut r = rng(42);
    for n in [1usize, 2, 3, 1000, 1023, 1024, 1025, 4097, 65_537, 100_003] {
        let keys: Vec<u32> = (0..n).map(|_| r.random()).collect();
        check(&mut sort, &keys);
        // Few distinct keys: long runs of ties.
        let keys: Vec<u32> = (0..n).map(|_| r.random_range(0..7) << 29).collect();
        check(&mut sort, &keys);
    }
}

#[test]
fn radix_sort_all_equal_and_extremes() {
    let mut sort = GpuRadixSort::new(ctx(), 16);
    check(&mut sort, &vec![0xdead_beef; 5000]);
    check(&mut sort, &vec![u32::MAX; 3000]);
    let keys: Vec<u32> = (0..5000u32).map(|i| if i % 2 == 0 { u32::MAX } else { 0 }).collect();
    check(&mut sort, &keys);
    let keys: Vec<u32> = (0..5000u32).rev().collect();
    check(&mut sort, &keys);
}

#[test]
fn radix_sort_one_million() {
    let mut sort = GpuRadixSort::new(ctx(), 1 << 20);
    let mut r = rng(7);
    let keys: Vec<u32> = (0..1_000_000).map(|_| r.random()).collect();
    check(&mut sort, &keys);
}

#[test]
fn radix_sort_rejects_mismatched_lengths() {
    let mut sort = GpuRadixSort::new(ctx(), 16);
    assert!(matches!(sort.sort(&[1, 2], &[0]), Err(raycontact::Error::InvalidInput { .. })));
}

#[test]
fn cpu_radix_sort_matches_sort() {
    let mut r = rng(9);
    for n in [0usize, 1, 2, 3, 1000, 77_777] {
        let keys: Vec<u32> = (0..n).map(|_| r.random_range(0..1000) * 4_000_000).collect();
        let mut k = keys.clone();
        let mut v: Vec<u32> = (0..n as u32).collect();
        raycontact::internals::cpu::radix_sort_segment(&mut k, &mut v);
        let mut expected: Vec<(u32, u32)> = keys.into_iter().zip(0..).collect();
        expected.sort_by_key(|&(k, _)| k);
        assert_eq!(k, expected.iter().map(|e| e.0).collect::<Vec<_>>());
        assert_eq!(v, expected.iter().map(|e| e.1).collect::<Vec<_>>());
    }
}
