# Reference runs of the original behind the parity tests of issue 17, item 11 (ee, dhssne, gmmds,
# knnmmds, largevis). Environment used: Debian's R 4.2.2 (r-base-core, r-base-dev, r-cran-irlba,
# -matrix, -rcpp, -dqrng, -sitmo, -bh, -rspectra); smallvis 0.0.2.9001, mize and rnndescent built from
# github:jlmelville/{smallvis,mize,rnndescent} (smallvis's src needs CXX_STD = CXX17 with this g++).
# Rfast is not in Debian: a stand-in package exported floyd() (Floyd-Warshall as Rfast documents
# it: NA = no edge, diagonal 0), nth() and colnth() (sort-based); vizier a no-op embed_plot(). None of
# the runs below calls nth/colnth; gmmds calls floyd.
suppressMessages(library(smallvis))
x2m <- function(X) { m <- as.matrix(X[, which(vapply(X, is.numeric, logical(1)))]); attr(m, "dimnames") <- NULL; m }
iris10 <- x2m(iris[1:10, ])
iris10_Y <- smallvis:::pca_scores(iris10, ncol = 2)
q <- function(...) smallvis(..., epoch_callback = NULL, verbose = FALSE)
show <- function(x) print(x, digits = 17)

# ee (test_parity.py::test_ee_parity)
show(q(iris10, Y_init = iris10_Y, method = "ee", eta = 0.1, perplexity = 5, ret_extra = TRUE)$itercosts)
# dhssne (test_parity.py::test_dhssne_every_iteration_an_epoch, test_dhssne_parity)
r <- q(iris10, Y_init = iris10_Y, method = "dhssne", eta = 0.1, perplexity = 5, epoch = 1, max_iter = 12, ret_extra = c("alpha"))
show(r$itercosts); show(r$alpha); show(r$Y[1, ])
r <- q(iris10, Y_init = iris10_Y, method = "dhssne", eta = 0.1, perplexity = 5, epoch = 50, ret_extra = c("alpha"))
show(r$itercosts); show(r$Y[1, ])
# gmmds, knnmmds (test_mmds.py)
for (m in c("knnmmds", "gmmds")) {
  r <- q(iris, scale = FALSE, perplexity = 10, Y_init = "spca", method = m, eta = 1e-5, epoch = 50, max_iter = 500, ret_extra = TRUE)
  show(r$itercosts); show(r$Y[1, ])
}
r <- q(iris, Y_init = "spca", method = "gmmds", eta = 0.01, epoch = 50, max_iter = 300, ret_extra = TRUE)
show(r$itercosts); show(r$Y[1, ])
r <- q(iris10, Y_init = iris10_Y, method = "knnmmds", eta = 0.1, perplexity = 5, max_iter = 50, ret_extra = TRUE)
show(r$itercosts); show(r$Y[1, ])
r <- q(iris10, Y_init = iris10_Y, method = "gmmds", eta = 0.1, perplexity = 3, ret_extra = TRUE)
show(r$itercosts); show(r$Y[1, ])
# the exact kNN the original calls (test_original_knn.py): k + 1 neighbours, 1-based
nn <- rnndescent::brute_force_knn(x2m(iris), k = 11)
X <- scale(x2m(iris), scale = FALSE); X <- X / abs(max(X))
nn31 <- rnndescent::brute_force_knn(X, k = 31)
show(nn31$dist[1, 1:2])
# largevis (test_parity.py::test_largevis_cost_with_near_coincident_points)
show(q(iris, Y_init = "spca", method = "largevis", eta = 0.1, epoch = 1, max_iter = 12, ret_extra = TRUE)$itercosts)
