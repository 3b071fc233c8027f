"""kerascpp: load, run and save Keras models with a native C++ engine, with the API of Keras.

    import kerascpp as keras
    from kerascpp import backend as K

    model = keras.models.load_model("model.keras")   # or .h5, Keras 2 or 3
    y = model.predict(x)
    w = K.get_value(model.weights[0])
    model.compile(optimizer="adam", loss="mse")
    history = model.fit(x, y, epochs=3, callbacks=[keras.callbacks.EarlyStopping(patience=2)])
"""
from . import _kerascpp
from . import _variable  # noqa: F401  (numpy protocol and operators on Variable)
from . import backend, callbacks, config, constraints, distribute, initializers, layers, losses, metrics, models, ops, optimizers, regularizers, utils
from ._builder import KerasTensor
from .layers import Input, Layer
from .models import Model, Sequential, load_model, model_from_json

Variable = _kerascpp.Variable
__version__ = "0.1.0"

__all__ = ["backend", "callbacks", "config", "constraints", "distribute", "initializers", "regularizers", "layers", "losses", "metrics", "models", "ops", "optimizers", "utils", "Input",
           "KerasTensor", "Layer", "Model", "Sequential", "Variable", "load_model", "model_from_json"]
