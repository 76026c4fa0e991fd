//! What `learn-coverage` decides and reports around learning: which locations a user
//! asked for, a refinement's rounds and outcome in a line each, the inputs it ran
//! written out, and when a model's trees learned from too few covering inputs to be
//! trusted.

use crate::{Ending, Evidence, GOAL_CONFIDENCE, MIN_POSITIVES, Model, Phase, Refined, Round};
use std::path::Path;

/// Which named locations to learn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LocationKinds {
    /// Functions and methods.
    Functions,
    /// Source lines.
    Lines,
    /// Both.
    All,
}

impl LocationKinds {
    /// Whether the location called `name` is of these kinds.
    pub fn keeps(self, name: &str) -> bool {
        match self {
            LocationKinds::All => true,
            LocationKinds::Functions => {
                name.starts_with("function ") || name.starts_with("method ")
            }
            LocationKinds::Lines => name.starts_with("line "),
        }
    }
}

impl Round {
    /// The round in one line: its phase, how many of its inputs reached the location
    /// (and, when aimed, satisfied their leaf and had run before), the executions and
    /// covering inputs so far.
    pub fn line(&self) -> String {
        format!(
            "{:>7?} round: {}/{} reached it ({:.1} %){}; {} executions, {} covering inputs",
            self.phase,
            self.hits,
            self.inputs,
            100.0 * self.hit_rate(),
            if self.phase == Phase::Aimed {
                format!(
                    ", {} satisfied their leaf, {} run before",
                    self.satisfied, self.run_before
                )
            } else {
                String::new()
            },
            self.executions,
            self.positives
        )
    }
}

impl Evidence {
    /// The rounds and the bound they give, e.g. `hit 97/100 + 95/100, at least 93.1 %
    /// at 95 % confidence`.
    pub fn line(&self) -> String {
        format!(
            "hit {}, at least {:.1} % at {:.0} % confidence",
            self.rounds
                .iter()
                .map(|(hits, inputs)| format!("{hits}/{inputs}"))
                .collect::<Vec<_>>()
                .join(" + "),
            100.0 * self.lower_bound(),
            100.0 * GOAL_CONFIDENCE
        )
    }
}

impl Refined {
    /// What refining `name` towards the hit rate `goal` came to, in one line: whether
    /// the goal was reached, the budget spent, the last aimed round, the kept tree's
    /// aimed rounds and the bound they put on its hit rate.
    pub fn summary(&self, name: &str, goal: f64) -> String {
        format!(
            "focus {name}: {} after {} executions in {} rounds{}; paths up to k = {}{}{}",
            if self.reached_goal() {
                format!("goal {:.0} % reached", 100.0 * goal)
            } else {
                format!("goal {:.0} % NOT reached", 100.0 * goal)
            },
            self.executions,
            self.rounds.len(),
            self.rounds
                .iter()
                .rfind(|r| r.phase == Phase::Aimed)
                .map(|r| format!(" (last aimed round: {}/{} reached it)", r.hits, r.inputs))
                .unwrap_or_default(),
            self.k,
            self.evidence
                .as_ref()
                .map(|e| format!("; the kept tree's aimed inputs {}", e.line()))
                .unwrap_or_default(),
            match self.ending {
                Ending::GoalReached | Ending::ExecutionsSpent => "",
                Ending::DrawsSpent =>
                    "; stopped early: the trees aimed mostly at inputs run before \
                     (a small language, or a leaf too narrow)",
                Ending::Deadline => "; stopped at --focus-time",
            }
        )
    }

    /// The warning when no input reached `name`, so the model has no tree for it.
    pub fn no_tree_warning(&self, name: &str) -> Option<String> {
        self.location.is_none().then(|| {
            format!(
                "no input reached {name}: the model has no tree for it; give inputs that \
                 reach it, or a larger --execs"
            )
        })
    }

    /// Writes the inputs the loop ran into `dir` (created if missing), one file each,
    /// `NNNNNN-hit` or `NNNNNN-miss`; an error names the file.
    pub fn save_inputs(&self, dir: &Path) -> Result<(), String> {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        for (i, (text, hit)) in self.added.iter().enumerate() {
            let file = dir.join(format!("{i:06}-{}", if *hit { "hit" } else { "miss" }));
            std::fs::write(&file, text)
                .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        }
        Ok(())
    }
}

impl Model {
    /// The warning for trained locations with fewer covering inputs than
    /// [`MIN_POSITIVES`], and what to do about it; `None` if every tree had enough.
    pub fn few_positives_warning(&self) -> Option<String> {
        let few: Vec<&crate::LocationModel> = self
            .locations
            .iter()
            .filter(|l| l.too_few_positives())
            .collect();
        if few.is_empty() {
            return None;
        }
        Some(format!(
            "{} of {} trees learned from fewer than {} covering inputs (e.g. {}); such \
             a tree describes what those inputs share, not the location: give more inputs \
             that reach it, or refine one with --focus LOCATION and the program",
            few.len(),
            self.locations.len(),
            MIN_POSITIVES,
            few.iter()
                .take(3)
                .map(|l| format!("{} with {}", l.name, l.covered))
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn location_kinds_keep_their_names() {
        assert!(LocationKinds::Functions.keeps("function a.py:f"));
        assert!(LocationKinds::Functions.keeps("method A.f"));
        assert!(!LocationKinds::Functions.keeps("line a.py:3"));
        assert!(LocationKinds::Lines.keeps("line a.py:3"));
        assert!(LocationKinds::All.keeps("anything"));
    }

    #[test]
    fn saved_inputs_say_whether_they_hit() {
        let dir = tempfile::tempdir().unwrap();
        let refined = Refined {
            location: None,
            rounds: Vec::new(),
            executions: 2,
            ending: Ending::ExecutionsSpent,
            added: vec![(b"a".to_vec(), true), (b"b".to_vec(), false)],
            k: 2,
            evidence: None,
        };
        refined.save_inputs(&dir.path().join("out")).unwrap();
        assert_eq!(
            refined.summary("f", 0.9),
            "focus f: goal 90 % NOT reached after 2 executions in 0 rounds; paths up to k = 2"
        );
        assert!(refined.no_tree_warning("f").is_some());
        let read = |name: &str| std::fs::read(dir.path().join("out").join(name)).unwrap();
        assert_eq!(read("000000-hit"), b"a");
        assert_eq!(read("000001-miss"), b"b");
    }

    #[test]
    fn the_summary_says_the_bound_of_the_kept_trees_rounds() {
        let refined = Refined {
            location: None,
            rounds: Vec::new(),
            executions: 200,
            ending: Ending::GoalReached,
            added: Vec::new(),
            k: 3,
            evidence: Some(Evidence {
                rounds: vec![(97, 100), (95, 100)],
            }),
        };
        assert_eq!(
            refined.summary("f", 0.9),
            "focus f: goal 90 % reached after 200 executions in 0 rounds; paths up to k = 3; \
             the kept tree's aimed inputs hit 97/100 + 95/100, at least 93.0 % at 95 % \
             confidence"
        );
    }
}
