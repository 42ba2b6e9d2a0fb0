"""The ``rnn-designer search`` command's options (argparse alone: nothing heavy is imported
while the command line is parsed)."""


def add_search(sub):
    """``rnn-designer search``: its options; returns its parser (the command line adds the
    options every data-reading command shares)."""
    s = sub.add_parser("search", help="search a project's design and settings with Optuna: "
                       "many short trainings, each an ordinary run folder")
    s.add_argument("project")
    s.add_argument("--trials", type=int, required=True, metavar="N", help="the study's total "
                   "number of trials (a search run again goes on to N)")
    s.add_argument("--space", metavar="SPACE.json", help="what to vary, instead of the "
                   "project's 'search' section (the same form)")
    s.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                   help="auto (default): the GPUs when there are any, else the CPU")
    s.add_argument("--gpus", metavar="all|K", help="how many GPUs to use (default all)")
    s.add_argument("--per-gpu", default="auto", metavar="K|auto", help="worker processes "
                   "per GPU (default auto: up to 4 where the design is small enough to share "
                   "a GPU, as its memory estimate, the GPU's free memory and the CPU's cores "
                   "allow; else 1)")
    s.add_argument("--workers", type=int, metavar="K", help="with --device cpu: worker "
                   "processes (default 1)")
    s.add_argument("--steps", type=int, metavar="N", help="training steps of each trial "
                   "(default: the project's max_steps)")
    s.add_argument("--folds", default="auto", metavar="auto|K", help="score each trial by "
                   "K-fold cross-validation over the training sequences and train the best "
                   "design again on the project's split (auto, the default: 3 folds for "
                   "labelled sequences validated on fewer than 200, else 1: the project's "
                   "own split)")
    s.add_argument("--refit-seeds", type=int, default=1, metavar="K", help="train the "
                   "pick again K times, with the seeds S, S+1, ... (S: --seed, else the "
                   "project's), into best-trial-N, best-trial-N-seed-2 ... -seed-K: a seed "
                   "ensemble that 'rnn-designer evaluate' scores as one (default 1; without "
                   "cross-validation the best trial's own run is the first of the K)")
    s.add_argument("--refit-top", type=int, default=1, metavar="D", help="train the D best "
                   "designs again, each with --refit-seeds seeds: the one the search keeps "
                   "(best-trial-N), then the next best trials with other values "
                   "(ensemble-trial-M): an ensemble of designs for 'rnn-designer evaluate' "
                   "(default 1; one objective only)")
    s.add_argument("--storage", metavar="URL|FILE", help="an Optuna RDB URL (sqlite:///..., "
                   "postgresql://...), an SQLite file (.db, .sqlite), or a journal file on a "
                   "shared disk (any other file) (default: "
                   "sqlite:///<project dir>/runs/<project>.search.db)")
    s.add_argument("--study", metavar="NAME", help="the study's name (default: the project "
                   "file's name); machines that give the same --study and --storage join it")
    s.add_argument("--objective", default="val_loss", metavar="METRIC[,METRIC2]",
                   help="val_loss (default), val_accuracy, test_accuracy, ms_per_step or "
                   "params; two make a Pareto front")
    s.add_argument("--pruner", choices=("median", "halving", "none"), default="median",
                   help="stop trials that fall behind: median (default), halving "
                   "(successive halving) or none")
    s.add_argument("--seed", type=int, help="seeds the sampler, and trains every trial "
                   "with this seed")
    s.add_argument("--time-limit", type=float, metavar="SECONDS", help="start no trial "
                   "after this long")
    s.add_argument("--best-out", metavar="P.json", help="write the best trial's design as "
                   "a project here")
    s.add_argument("--json", action="store_true", help="one JSON line per event (for "
                   "programs)")
    return s
