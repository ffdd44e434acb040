"""Drafting: ambiguous and unanswerable questions from answerable items, by a model
(any OpenAI-compatible server, through ``openai``) or by offline rules, and candidate
SQL for SCARE's strata.

The modules, by concern:

- ``categories``, ``lexicon``: what each drafted category is; the word lists;
- ``context``: a database's schema and example values;
- ``prompts``, ``replies``: pure prompt building and reply parsing;
- ``settings``, ``cache``, ``client``, ``llm``: the model: settings and token
  accounting, the on-disk reply cache, the retrying client, the LLM drafter
  (only ``client`` imports ``openai``, and only ``llm`` imports ``client``);
- ``drafts``, ``offline``, ``checks``: jobs and drafts, the offline drafter, the
  checks and near-duplicate removal;
- ``candidates``: candidate SQL and SCARE strata;
- ``stage``: the build stages ``drafting`` and ``candidates``.
"""
