# Notebook 03, exercise 1: a tool of your own, convert_temperature, registered with @my_tools.tool.
# Checked by: lesson_lib.exercises.nb03.check_my_tool(my_tools)
import json

from lesson_lib.tools import ToolRegistry

my_tools = ToolRegistry()


@my_tools.tool
def convert_temperature(celsius: float) -> str:
    """Use this when the user asks to convert a temperature from Celsius (°C) to
    Fahrenheit (°F).

    Args:
        celsius: The temperature in degrees Celsius, e.g. 16.
    """
    # the type annotation makes "celsius" a required number in the schema, and the
    # docstring's first paragraph is the description the model reads (from the task's side)
    fahrenheit = round(celsius * 9 / 5 + 32, 1)
    return json.dumps({"celsius": celsius, "fahrenheit": fahrenheit})
