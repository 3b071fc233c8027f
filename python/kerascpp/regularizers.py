"""keras.regularizers: Keras 3's classes with their arguments, defaults and snake_case aliases, get(),
serialize() and deserialize() (made in _objects.py from Keras's own table)."""
from ._objects import Regularizer, make_family

globals().update(make_family(Regularizer))
