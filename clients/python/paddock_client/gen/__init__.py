"""Generated from messages/messages.proto and messages/service.proto by
clients/generate; do not edit."""
