"""Who a session is: fixed when it starts, never taken from a request."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from lazy_memory.engine.records import Actor


class Identity(BaseModel):
    """A session's identity: the actor its writes are attributed to, and its task id if any.

    A session with a task id is an agent, an empty one included, and agents are read-only.
    """

    model_config = ConfigDict(frozen=True)

    actor: Actor
    task_id: str | None = None

    @property
    def is_agent(self) -> bool:
        """True for a task agent's session, which may read but never write."""
        return self.task_id is not None


def agent_name(task_id: str) -> str:
    """How a message names an agent: by its task, or as one whose task id is empty."""
    return f"agent task {task_id!r}" if task_id else "an agent with an empty task id"
