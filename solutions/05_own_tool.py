# Notebook 05, exercise 3: an agent with a tool of your own, described so a model can choose it.
# Checked by: lesson_lib.exercises.nb05.check_my_agent(my_agent, my_question, my_arguments)

from lesson_lib.agent import Agent
from lesson_lib.tools import ToolRegistry

DISHES = {"Chengdu": "mapo tofu", "Beijing": "Peking duck",
          "Shanghai": "xiaolongbao (soup dumplings)"}

my_tools = ToolRegistry()


@my_tools.tool
def recommend_local_dish(city: str) -> dict:
    """Use this when the user asks what to eat in a city, or which local dish or food a city
    is famous for.

    Args:
        city: City name in English, e.g. Chengdu.
    """
    return {"city": city, "dish": DISHES.get(city, "ask a local: we don't know this city yet")}


my_agent = Agent(tools=my_tools)
my_question = "What should I eat in Chengdu?"
my_arguments = {"city": "Chengdu"}  # what a model would send for my_question
