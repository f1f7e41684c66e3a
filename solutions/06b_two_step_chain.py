# Notebook 06b, exercise 1: a dish tool for a chain's second step, described so a model can pick it.
# Checked by: lesson_lib.exercises.nb06.check_two_step_chain(my_registry)

import json

from lesson_lib.tools import WEATHER_TOOL, ToolRegistry, get_current_weather

DISHES = {"Beijing": "Peking duck", "Shanghai": "xiaolongbao (soup dumplings)",
          "Chengdu": "mapo tofu",
          "北京": "北京烤鸭", "上海": "小笼包", "成都": "麻婆豆腐"}  # the Chinese edition's cities


def get_local_dish(city: str) -> str:
    """Use this when the user asks what local dish or food to try in a city, or what a city
    is famous for eating.

    Args:
        city: City name, e.g. Beijing (北京 in the Chinese edition).
    """
    return json.dumps({"city": city, "dish": DISHES.get(city, "unknown")}, ensure_ascii=False)


my_registry = ToolRegistry()
my_registry.register(get_current_weather, WEATHER_TOOL)
my_registry.register(get_local_dish)
