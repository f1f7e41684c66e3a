# Notebook 05, build it: the memory agent's chat(), one user input with at most one tool round.
# Checked by: lesson_lib.exercises.nb05.check_my_agent_chat(MyAgent)

from lesson_lib.agent import Agent
from lesson_lib.llm import chat
from lesson_lib.protocol import assistant_to_dict


class MyAgent(Agent):
    def chat(self, user_input):
        """One user input: at most one round of tools, then the answer (stored and returned)."""
        # step 0: the input goes into the memory first; the model sees only the memory
        self.memory.add({"role": "user", "content": user_input})
        # step 1: the whole memory, and the tools the model may ask for
        message = chat(self.memory.to_api_format(), tools=self.tools, client=self.client)
        if message.tool_calls:
            # steps 2 and 3: run every call first, then write the call and all its results
            # together, so nothing can leave a call without its results in the memory
            results = []
            for call in message.tool_calls:
                output = self.registry.execute(call.function.name, call.function.arguments)
                results.append({"role": "tool", "tool_call_id": call.id, "content": output})
            self.memory.add_many([assistant_to_dict(message), *results])
            # step 4: ask again without tools: this reply can only be the answer
            message = chat(self.memory.to_api_format(), tools=None, client=self.client)
        answer = message.content or ""
        self.memory.add({"role": "assistant", "content": answer})
        return answer
