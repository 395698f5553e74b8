"""scoreboard"""
