"""The model zoo: specifications, training, and the prediction store.

- :mod:`.models` — model specifications (:class:`~shifteval.zoo.models.ModelSpec`), their training and
  the default zoo, weak to strong;
- :mod:`.build` — a zoo trained on a world, every split predicted and stored, models trained side by side;
- :mod:`.store` — the prediction store, in the project's one prediction format (cached, atomic);
- :mod:`.pretrained` — pretrained timm models, loaded offline;
- :mod:`.decode` — images decoded for timm models in worker processes;
- :mod:`.inference` — a model's softmax probabilities on decoded batches, at a chosen precision;
- :mod:`.predict` — prediction at scale: jobs per (model, dataset), run in shared passes.

The names below are importable from ``shifteval.zoo``; the others from their modules.
"""

from .build import Zoo, build_zoo, train_many, workers_for
from .models import ModelSpec, default_zoo
from .store import Predictions, PredictionStore, validate_predictions

__all__ = [
    "ModelSpec", "PredictionStore", "Predictions", "Zoo", "build_zoo", "default_zoo", "validate_predictions",
    "train_many", "workers_for",
]  # fmt: skip
