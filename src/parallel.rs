//! The compile pipeline's parallel steps (reading pages, rendering pages and their JSON
//! documents, compressing artifacts): an order-preserving map over all cores ([`map`]), and
//! one with more threads for reading files ([`map_reading`]). A site may have tens of
//! thousands of pages, and the machine has few cores; plain scoped threads are enough.
//!
//! Reading files ([`map_reading`]) uses more threads than cores, so that while one waits
//! for the disk the cores still parse. With a tenth of 100,000 page files out of the page
//! cache (as after a large build on a machine short of memory), two reading threads took
//! 1.0 s to read the content and eight 0.7 s; with every file cached both take the same.
//! (Handing out work in small batches instead of one share per thread was tried: starts
//! became 0.6 s slower at 100,000 pages, with more memory resident.)

/// Threads per core for [`map_reading`].
const READING_THREADS_PER_CORE: usize = 4;

/// Applies `f` to every item on up to `available_parallelism` threads, keeping the order.
/// Small inputs run on the calling thread. A panic in `f` is re-raised, never swallowed.
pub(crate) fn map<T, R, F>(items: Vec<T>, f: F) -> Vec<R>
where
    T: Send,
    R: Send,
    F: Fn(T) -> R + Sync,
{
    map_on(cores(), items, f)
}

/// [`map`] for work that waits on the file system: several threads per core.
pub(crate) fn map_reading<T, R, F>(items: Vec<T>, f: F) -> Vec<R>
where
    T: Send,
    R: Send,
    F: Fn(T) -> R + Sync,
{
    map_on(cores() * READING_THREADS_PER_CORE, items, f)
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn map_on<T, R, F>(threads: usize, items: Vec<T>, f: F) -> Vec<R>
where
    T: Send,
    R: Send,
    F: Fn(T) -> R + Sync,
{
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
        let doubled: Vec<u32> = items.iter().map(|n| n * 2).collect();
        assert_eq!(super::map(items.clone(), |n| n * 2), doubled);
        assert_eq!(super::map_reading(items.clone(), |n| n * 2), doubled);
        for threads in [2, 3, 7, 64] {
            assert_eq!(super::map_on(threads, items.clone(), |n| n * 2), doubled);
        }
        assert_eq!(super::map(vec![1, 2, 3], |n| n + 1), vec![2, 3, 4]);
        assert!(super::map(Vec::<u8>::new(), |n| n).is_empty());
    }

    #[test]
    fn a_panic_is_raised_again() {
        let items: Vec<u32> = (0..1000).collect();
        let raised = std::panic::catch_unwind(|| {
            super::map_on(4, items, |n| if n == 777 { panic!("item 777") } else { n })
        });
        assert!(raised.is_err());
    }
}
