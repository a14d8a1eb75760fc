"""Conversations with the assistant, kept per person, and the chat loop that streams them."""
