"""Adapters to RL libraries, one small module per library, each imported only when used.

``import cribenv`` never loads them (nor their library): import the module of the library you
use, e.g. ``from cribenv.integrations import rllib``. Each needs its library's extra.
"""
