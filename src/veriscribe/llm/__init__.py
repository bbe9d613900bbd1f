"""Chat models behind one client: embedded llama.cpp, Ollama, OpenAI-compatible, simulated."""
