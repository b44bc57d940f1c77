"""The owner's ``/mem`` commands: the one list of them (``registry``), the dispatcher (``dispatch``),
what each works with (``context``), its arguments (``args``), and the commands by what they act on:
memories, forgets (with their ``confirmations``), the bot's self, the jobs, the dashboard."""
