//! One helper for the compile pipeline's parallel steps (reading pages, rendering pages and
//! their JSON documents, compressing artifacts): an order-preserving map over all cores. A
//! site may have tens of thousands of pages, and the machine has few cores; plain scoped
//! threads are enough.

/// Applies `f` to every item on up to `available_parallelism` threads, keeping the order.
/// Small inputs run on the calling thread. A panic in `f` is re-raised, never swallowed.
pub(crate) fn map<T, R, F>(items: Vec<T>, f: F) -> Vec<R>
where
    T: Send,
    R: Send,
    F: Fn(T) -> R + Sync,
{
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    if threads < 2 || items.len() < 64 {
        return items.into_iter().map(f).collect();
    }
    let chunk = items.len().div_ceil(threads);
    let mut chunks: Vec<Vec<T>> = Vec::with_capacity(threads);
    let mut rest = items;
    while !rest.is_empty() {
        let tail = rest.split_off(chunk.min(rest.len()));
        chunks.push(std::mem::replace(&mut rest, tail));
    }
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| scope.spawn(move || chunk.into_iter().map(f).collect::<Vec<R>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn keeps_order() {
        let items: Vec<u32> = (0..1000).collect();
        assert_eq!(
            super::map(items.clone(), |n| n * 2),
            items.iter().map(|n| n * 2).collect::<Vec<_>>()
        );
        assert_eq!(super::map(vec![1, 2, 3], |n| n + 1), vec![2, 3, 4]);
        assert!(super::map(Vec::<u8>::new(), |n| n).is_empty());
    }
}
