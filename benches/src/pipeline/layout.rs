//! In which order the streams of a timer run are made, which decides how
//! their objects lie in memory.
//!
//! # Why it matters
//!
//! Every object of a stream (its channel, pool, tasks, timer) is allocated
//! by the thread that makes the stream. The tokio baseline spawns a
//! runtime's streams from inside that runtime, on its own thread: glibc
//! gives each thread its own arena, so one runtime's objects lie together.
//! Tempo's streams are made on the application thread; dealt round-robin,
//! two contexts' streams alternate in memory, and each context, on its own
//! core, walks an address range twice the size of its own streams, half of
//! it the other core's. With 5,000 streams on 2 contexts that cost Tempo
//! 25-45 % more CPU than the grouped order, running the very same code
//! (figures in `benches/README.md`). Padding the small
//! shared objects to 128 bytes (task cells, pools, the channel's and the
//! media task's shared state) did not change it: it is the spread, not
//! lines shared at objects' edges.
//!
//! [`Layout::Grouped`] (the default) makes one group's streams after the
//! other's, as the baseline's arenas lay them out; [`Layout::Interleaved`]
//! deals them round-robin for both runtimes (tokio's are then spawned
//! from the application thread through each runtime's handle), which is
//! what an application that assigns streams to contexts in turn, from one
//! thread, gets.

/// In which order the streams are made (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Layout {
    /// Group 0's streams, then group 1's, ...
    #[default]
    Grouped,
    /// Round-robin over the groups, from the application thread.
    Interleaved,
}

impl Layout {
    /// Its name in `--layout` and in the output.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Grouped => "grouped",
            Layout::Interleaved => "interleaved",
        }
    }

    /// Parses `--layout`'s value; the default without one.
    pub fn parse_option(value: Option<&str>) -> Result<Layout, String> {
        match value {
            None => Ok(Layout::default()),
            Some("grouped") => Ok(Layout::Grouped),
            Some("interleaved") => Ok(Layout::Interleaved),
            Some(other) => Err(format!("--layout {other}: grouped or interleaved")),
        }
    }

    /// The group of each stream, in the order the streams are made: every
    /// group `g` gets [`streams_in_group`](super::streams_in_group) streams.
    pub fn groups_in_order(self, streams: usize, groups: usize) -> Vec<usize> {
        let groups = groups.max(1);
        match self {
            Layout::Grouped => (0..groups)
                .flat_map(|g| std::iter::repeat_n(g, super::streams_in_group(streams, groups, g)))
                .collect(),
            Layout::Interleaved => (0..streams).map(|i| i % groups).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_orders_give_every_group_its_share() {
        for layout in [Layout::Grouped, Layout::Interleaved] {
            for (streams, groups) in [(0, 1), (1, 2), (7, 3), (5000, 2)] {
                let order = layout.groups_in_order(streams, groups);
                assert_eq!(order.len(), streams);
                for g in 0..groups {
                    let count = order.iter().filter(|&&x| x == g).count();
                    assert_eq!(count, super::super::streams_in_group(streams, groups, g));
                }
            }
        }
        assert_eq!(Layout::Grouped.groups_in_order(5, 2), [0, 0, 0, 1, 1]);
        assert_eq!(Layout::Interleaved.groups_in_order(5, 2), [0, 1, 0, 1, 0]);
    }

    #[test]
    fn names_parse_back() {
        for layout in [Layout::Grouped, Layout::Interleaved] {
            assert_eq!(Layout::parse_option(Some(layout.name())), Ok(layout));
        }
        assert_eq!(Layout::parse_option(None), Ok(Layout::Grouped));
        assert!(Layout::parse_option(Some("random")).is_err());
    }
}
