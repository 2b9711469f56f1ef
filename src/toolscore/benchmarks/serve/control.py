"""The control API's endpoints (the table in :mod:`.http`): whoever plays the
user creates episodes, advances their turns, resets and ends them. Reached only with the
control token (:mod:`.guard`), never by the agents.

Each answer is built before anything is written where it can fail on its content (an ended
episode's record is JSON throughout, see :mod:`.jsonsafe`), so a request that
is answered with an error has changed nothing.
"""

from __future__ import annotations

import json
from typing import Any

from toolscore.benchmarks.serve.episodes import EpisodeEnded, EpisodeError, Episodes


def control_routes(episodes: Episodes) -> list[Any]:
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def body(request: Request) -> dict[str, Any]:
        raw = await request.body()
        if not raw.strip():
            return {}
        try:
            data = json.loads(raw, parse_constant=_no_constant)
        except ValueError:
            raise EpisodeError("request body: not JSON") from None
        if not isinstance(data, dict):
            raise EpisodeError("request body: expected a JSON object")
        return data

    def fail(e: Exception) -> JSONResponse:
        return JSONResponse({"error": str(e)}, status_code=getattr(e, "status", 400))

    def describe(request: Request, episode: Any) -> dict[str, Any]:
        sample = episode.world.sample
        return {"id": episode.id, "mcp_url": f"{str(request.base_url).rstrip('/')}"
                f"/mcp/{episode.key}",
                "conversation": sample.id if sample else None, "epoch": episode.epoch,
                "system_prompt": episode.world.system_prompt, "turn": episode.turn,
                "calls": len(episode.calls), "ended": episode.ended,
                "attempts": len(episode.discarded) + 1,
                "tools": list(episode.world.specs)}

    async def create(request: Request) -> JSONResponse:
        try:
            data = await body(request)
            conversation = data.get("conversation")
            episode = episodes.create(None if conversation is None else str(conversation))
        except (EpisodeError, ValueError) as e:
            return fail(e)
        return JSONResponse(describe(request, episode), status_code=201)

    def action(name: str) -> Any:
        async def endpoint(request: Request) -> JSONResponse:
            try:
                episode = episodes.get(request.path_params["episode"])
                if name == "show":
                    return JSONResponse(describe(request, episode))
                if name == "calls":
                    return JSONResponse({"id": episode.id, "turn": episode.turn,
                                         "calls": [c.to_dict() for c in episode.calls]})
                if episode.ended:
                    raise EpisodeEnded(f"episode {episode.id} has ended")
                if name == "turn":
                    turn = (await body(request)).get("turn")
                    return JSONResponse({"id": episode.id, "turn": episode.advance(
                        None if turn is None else int(turn))})
                if name == "reset":
                    episode.reset()
                    return JSONResponse(describe(request, episode))
                await body(request)  # a body that is not JSON is refused before ending
                record = episodes.end(episode.id).to_dict()
            except (EpisodeError, ValueError, TypeError, OverflowError) as e:
                return fail(e)
            return JSONResponse({"id": episode.id, "record": record})
        return endpoint

    return [
        Route("/episodes", create, methods=["POST"]),
        Route("/episodes/{episode}", action("show"), methods=["GET"]),
        Route("/episodes/{episode}/calls", action("calls"), methods=["GET"]),
        Route("/episodes/{episode}/turn", action("turn"), methods=["POST"]),
        Route("/episodes/{episode}/reset", action("reset"), methods=["POST"]),
        Route("/episodes/{episode}/end", action("end"), methods=["POST"]),
    ]


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")
