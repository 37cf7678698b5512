"""lich-plugin and lich: the plugin route through a harness's plugin manager, lich-plugin's
layout, finding and replacing lich-plugin, the release lichhook claims, lich's tools and
the mods and skills the plugin carries."""
