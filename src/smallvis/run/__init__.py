"""Running an embedding: the run configuration and its defaults (:mod:`.presets`, :mod:`.arguments`),
initial coordinates (:mod:`.init`), the optimisers (:mod:`.optim`), the driver's iteration loop
(:mod:`.driver`) and the result (:mod:`.result`)."""
