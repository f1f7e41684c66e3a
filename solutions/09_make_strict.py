# Notebook 09, exercise 1: a copy of a tool that strict mode accepts, with the same meaning.
# Checked by: lesson_lib.exercises.nb09.check_make_strict(make_strict)
import copy


def make_strict(tool):
    strict = copy.deepcopy(tool)  # the nested schemas too: the caller's tool stays as it was
    strict["function"]["strict"] = True
    strict["function"]["parameters"] = close(strict["function"]["parameters"])
    return strict


def close(schema):
    """One schema made strict; objects inside it (properties, array items) too."""
    if schema.get("type") == "object":
        optional = set(schema["properties"]) - set(schema.get("required", []))
        for key, sub in schema["properties"].items():
            sub = close(sub)
            if key in optional:
                sub = nullable(sub)
            schema["properties"][key] = sub
        schema["required"] = list(schema["properties"])
        schema["additionalProperties"] = False
    if schema.get("type") == "array" and "items" in schema:
        schema["items"] = close(schema["items"])
    return schema


def nullable(schema):
    schema = dict(schema)
    schema["type"] = [schema["type"], "null"]
    if "enum" in schema:
        schema["enum"] = schema["enum"] + [None]
    return schema
