"""The local Mixture-of-Experts model that ranks extraction proposals (see MODEL_CARD.md).

    moe.py         config, cosine router, experts, the ranker, the balance loss
    tokens.py      TokenSet / Batch: featurised proposals as the model reads them
    train.py       training loop with the LocMoE+ token-choice -> expert-choice switch
    checkpoint.py  save / load (float16 on disk), for the ranker and the layout reader
    layout.py      the layout reader (issue 13): words -> per-field begin / end / absent, LocMoE+ MoE blocks
    layout_train.py its training loop (switch criterion, capacity lower bound)
    weights/       the shipped weights (`docassay model train` writes them)

infra does not import extractors: features are computed by `extractors.instructions.model_features`.
"""
