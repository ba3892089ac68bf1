"""Figures of embeddings and runs (matplotlib, imported on first use; never ``plt.show``).

- :mod:`.scatter` — the embedding scatter plot, grids of panels, the intrinsic-dimensionality plot;
- :mod:`.run` — cost curves, per-point costs and animations of a run.
"""

from .run import ANIMATION_EXTENSIONS, animate, check_animation_path, plot_costs, plot_point_costs
from .scatter import (categorical_colours, check_plot_path, infer_label_kind, marker_size,
                      plot_dimensionality, plot_embedding, plot_grid)

__all__ = ["ANIMATION_EXTENSIONS", "animate", "categorical_colours", "check_animation_path",
           "check_plot_path", "infer_label_kind", "marker_size", "plot_costs",
           "plot_dimensionality", "plot_embedding", "plot_grid", "plot_point_costs"]
