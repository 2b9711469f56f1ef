"""BFCL's TwitterAPI: one account's tweets, retweets, comments and follows.

Tweets are dicts keyed by an int id (the scenario's string keys are converted on load). A
tweet posted without ``tags`` or ``mentions`` holds the method's default list itself, one list
shared by every such tweet of the process, and ``mention`` extends a tweet's list in place:
BFCL's backend behaves so, and its results depend on it, so toolscore's does too.
"""

from __future__ import annotations

import copy
from typing import Any

from toolscore.benchmarks.bfcl.multiturn.backend import Backend
from toolscore.benchmarks.bfcl.release import constant

_FIELDS = ("username", "password", "authenticated", "tweets", "comments", "retweets",
           "following_list", "tweet_counter")


def _refused(action: str) -> dict[str, str]:
    return {"error": f"User not authenticated. Please authenticate before {action}."}


def _missing(tweet_id: Any) -> dict[str, str]:
    return {"error": f"Tweet with ID {tweet_id} not found."}


class TwitterAPI(Backend):
    """Posting, retweeting, commenting and following for the authenticated user."""

    def __init__(self) -> None:
        self.username: str
        self.password: str
        self.authenticated: bool
        self.tweets: dict[int, dict[str, Any]]
        self.comments: dict[Any, list[dict[str, str]]]
        self.retweets: dict[str, list[int]]
        self.following_list: list[str]
        self.tweet_counter: int

    def _load_scenario(self, scenario: dict[str, Any], long_context: bool = False) -> None:
        defaults = copy.deepcopy(constant("posting_api.py", "DEFAULT_STATE"))
        for field in _FIELDS:
            setattr(self, field, scenario.get(field, defaults[field]))
        self.tweets = {int(k): v for k, v in self.tweets.items()}

    def authenticate_twitter(self, username: str, password: str) -> dict[str, bool]:
        ok = username == self.username and password == self.password
        if ok:
            self.authenticated = True
        return {"authentication_status": ok}

    def posting_get_login_status(self) -> dict[str, bool]:
        return {"login_status": bool(self.authenticated)}

    def post_tweet(self, content: str, tags: list[str] = [],  # noqa: B006 - shared, as BFCL's
                   mentions: list[str] = []) -> dict[str, Any]:  # noqa: B006
        if not self.authenticated:
            return _refused("posting")
        tweet = {"id": self.tweet_counter, "username": self.username, "content": content,
                 "tags": tags, "mentions": mentions}
        self.tweets[self.tweet_counter] = tweet
        self.tweet_counter += 1
        return tweet

    def retweet(self, tweet_id: int) -> dict[str, str]:
        if not self.authenticated:
            return _refused("retweeting")
        if tweet_id not in self.tweets:
            return _missing(tweet_id)
        done = self.retweets.setdefault(self.username, [])
        if tweet_id in done:
            return {"retweet_status": "Already retweeted"}
        done.append(tweet_id)
        return {"retweet_status": "Successfully retweeted"}

    def comment(self, tweet_id: int, comment_content: str) -> dict[str, str]:
        if not self.authenticated:
            return _refused("commenting")
        if tweet_id not in self.tweets:
            return _missing(tweet_id)
        self.comments.setdefault(tweet_id, []).append(
            {"username": self.username, "content": comment_content})
        return {"comment_status": "Comment added successfully"}

    def mention(self, tweet_id: int, mentioned_usernames: list[str]) -> dict[str, str]:
        if tweet_id not in self.tweets:
            return _missing(tweet_id)
        self.tweets[tweet_id]["mentions"].extend(mentioned_usernames)
        return {"mention_status": "Users mentioned successfully"}

    def follow_user(self, username_to_follow: str) -> dict[str, Any]:
        if not self.authenticated:
            return _refused("following")
        if username_to_follow in self.following_list:
            return {"follow_status": False}
        self.following_list.append(username_to_follow)
        return {"follow_status": True}

    def list_all_following(self) -> dict[str, Any]:
        if not self.authenticated:
            return _refused("listing following")
        return {"following_list": self.following_list}

    def unfollow_user(self, username_to_unfollow: str) -> dict[str, Any]:
        if not self.authenticated:
            return _refused("unfollowing")
        if username_to_unfollow not in self.following_list:
            return {"unfollow_status": False}
        self.following_list.remove(username_to_unfollow)
        return {"unfollow_status": True}

    def get_tweet(self, tweet_id: int) -> dict[str, Any]:
        if tweet_id not in self.tweets:
            return _missing(tweet_id)
        return self.tweets[tweet_id]

    def get_user_tweets(self, username: str) -> list[dict[str, Any]]:
        return [t for t in self.tweets.values() if t["username"] == username]

    def search_tweets(self, keyword: str) -> list[dict[str, Any]]:
        wanted = keyword.lower()
        return [t for t in self.tweets.values()
                if wanted in t["content"].lower() or wanted in [x.lower() for x in t["tags"]]]

    def get_tweet_comments(self, tweet_id: int) -> Any:
        if tweet_id not in self.tweets:
            return _missing(tweet_id)
        return self.comments.get(tweet_id, [])

    def get_user_stats(self, username: str) -> dict[str, int]:
        return {
            "tweet_count": sum(1 for t in self.tweets.values() if t["username"] == username),
            "following_count": len(self.following_list) if username == self.username else 0,
            "retweet_count": len(self.retweets.get(username, [])),
        }
